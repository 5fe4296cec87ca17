/* datafile.h: the writers of a view's numbers (app_data, views.h): CSV that numpy.loadtxt and
 * pandas read, and NPY. The format table (format.h) names them; the export engine calls them
 * through it. */
#ifndef PELAB_APP_DATAFILE_H
#define PELAB_APP_DATAFILE_H

#include <stdio.h>

#include "views.h"

/* CSV of d to fp: '#' lines with the version, command and shape, then the values (wide: one
 * table row per row, blocks for a third axis; long_form: one row per value with named index
 * columns). Returns 0, or -1 when a write failed. */
int app_write_csv(FILE *fp, const app_data *d, const char *command, int long_form);
/* NPY 1.0 of d to fp (command and long_form are not used: the format has no place for them).
 * Returns 0 or -1. */
int app_write_npy(FILE *fp, const app_data *d, const char *command, int long_form);
/* Write f as printf("%.9g") does (at most 16 bytes and a NUL into buf); returns the length.
 * The CSV writer's number format: 9 significant digits read back to the same float. */
int app_format_float(char *buf, float f);

#endif
