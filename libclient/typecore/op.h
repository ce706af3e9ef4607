/* Reduction arithmetic: the predefined MPI operations applied elementwise to buffers of one
 * basic datatype (MPI 3.1 §5.9.2).  Pure functions of their arguments, no state, no locks:
 * safe to call from any rank's thread at once.  Callers (reduce, allreduce, scan,
 * accumulate) map MPI_Op/MPI_Datatype handles to these enums and check tm_op_defined()
 * before they move any data, so a bad pair fails before communication starts. */
#ifndef TMPI_LIBCLIENT_OP_H
#define TMPI_LIBCLIENT_OP_H

#include <stddef.h>

/* The predefined basic datatypes a reduction can name.  The pair types are the C structs
 * MINLOC/MAXLOC work on: {float v; int i;}, {double v; int i;}, {long v; int i;},
 * {int v; int i;}, {short v; int i;}, {long double v; int i;}, and Fortran's MPI_2REAL and
 * MPI_2DOUBLE_PRECISION, whose index has the value's type: {float v, i;}, {double v, i;}.
 * Both enums are kept on one line each, verbatim as agreed with the callers. */
/* clang-format off */
enum tm_basic { TM_T_CHAR, TM_T_SIGNED_CHAR, TM_T_UNSIGNED_CHAR, TM_T_BYTE, TM_T_SHORT, TM_T_UNSIGNED_SHORT, TM_T_INT, TM_T_UNSIGNED, TM_T_LONG, TM_T_UNSIGNED_LONG, TM_T_LONG_LONG, TM_T_UNSIGNED_LONG_LONG, TM_T_FLOAT, TM_T_DOUBLE, TM_T_LONG_DOUBLE, TM_T_WCHAR, TM_T_C_BOOL, TM_T_INT8, TM_T_INT16, TM_T_INT32, TM_T_INT64, TM_T_UINT8, TM_T_UINT16, TM_T_UINT32, TM_T_UINT64, TM_T_AINT, TM_T_OFFSET, TM_T_COUNT, TM_T_FLOAT_INT, TM_T_DOUBLE_INT, TM_T_LONG_INT, TM_T_2INT, TM_T_SHORT_INT, TM_T_LONG_DOUBLE_INT, TM_T_PACKED, TM_T_C_FLOAT_COMPLEX, TM_T_C_DOUBLE_COMPLEX, TM_T_C_LONG_DOUBLE_COMPLEX, TM_T_2FLOAT, TM_T_2DOUBLE, TM_T__COUNT };

enum tm_opkind { TM_OP_SUM, TM_OP_PROD, TM_OP_MIN, TM_OP_MAX, TM_OP_LAND, TM_OP_LOR, TM_OP_LXOR, TM_OP_BAND, TM_OP_BOR, TM_OP_BXOR, TM_OP_MINLOC, TM_OP_MAXLOC, TM_OP_REPLACE, TM_OP_NO_OP, TM_OP__COUNT };
/* clang-format on */

/* inout[i] = in[i] op inout[i] for i < count (MPI order: the left operand is `in`, which comes
 * from the lower rank when the caller combines in rank order).  Returns 0, or -EINVAL when op
 * is not defined for type.
 *
 * `in` and `inout` must not overlap, except that for REPLACE and NO_OP they may be the same
 * buffer.  With count == 0 nothing is read or written and the pointers may be NULL.
 * Signed integer SUM/PROD wrap (two's complement); unsigned ones wrap modulo 2^N; logical
 * ops store 0 or 1; MINLOC/MAXLOC break ties by taking the smaller index. */
int tm_op_apply(enum tm_opkind op, enum tm_basic type, const void *in, void *inout, size_t count);

/* 1 if the MPI standard defines op on type, else 0 (also 0 for out-of-range values). */
int tm_op_defined(enum tm_opkind op, enum tm_basic type);

/* sizeof the C type; pair types: sizeof the struct {T v; int i;} with natural padding, e.g.
 * sizeof(struct {double d; int i;}).  PACKED is 1 (a byte); out-of-range values give 0. */
size_t tm_basic_size(enum tm_basic type);

/* The bytes of one element in packed form (the MPI type size): tm_basic_size, except for the
 * pairs, whose packed form is value then index without the C struct's padding. */
size_t tm_basic_psize(enum tm_basic type);

/* tm_op_apply on count elements in packed form, tm_basic_psize(type) bytes apart (messages,
 * packed twins and contiguous types hold them so); the same call for types without padding. */
int tm_op_apply_packed(enum tm_opkind op, enum tm_basic type, const void *in, void *inout,
                       size_t count);

#endif
