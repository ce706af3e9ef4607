/* name.h — object names (MPI_Comm/Type/Win_set_name and _get_name), one helper for every
 * kind: the object keeps a char * (NULL: no name set). */
#ifndef TMPI_LIBCLIENT_NAME_H
#define TMPI_LIBCLIENT_NAME_H

/* Replaces *slot with a copy of name, cut to MPI_MAX_OBJECT_NAME - 1 characters (MPI 3.1
 * §6.8: longer names are truncated).  Returns MPI_SUCCESS, MPI_ERR_ARG (name NULL) or
 * MPI_ERR_NO_MEM. */
int tm_name_set(char **slot, const char *name);
/* Copies the name (or dflt when none is set) into out (MPI_MAX_OBJECT_NAME bytes) and its
 * length into *len. */
void tm_name_get(const char *slot, const char *dflt, char *out, int *len);

#endif
