/* ctl_tree.h — `tmpictl tree` (ctl_tree.c). */
#ifndef TMPI_LAUNCHER_CTL_TREE_H
#define TMPI_LAUNCHER_CTL_TREE_H

#include <stdbool.h>

/* argv[0] is "tree"; json: --json came before it.  Prints the plan; returns the exit status:
 * 0, 1 (a rejected tree file, or one that cannot apply), 2 (bad options). */
int ctl_tree_main(int argc, char **argv, bool json);

#endif
