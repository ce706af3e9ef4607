/* A counter in a library of the project (a static library where the build system makes one):
 * its global must be private to each rank, like the program's own. */
#ifndef COUNTER_H
#define COUNTER_H

extern int counter_value;

/* Adds one to counter_value and returns the new value. */
int counter_bump(void);

#endif
