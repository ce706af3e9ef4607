/* datatypes_api.c — the datatype API on its own: every constructor's size, extent and true
 * extent against hand-computed values, envelopes and contents for every combiner, names,
 * Type_match_size, Pack/Unpack round trips, external32 byte order, and the error classes of
 * bad arguments (MPI_ERRORS_RETURN). */
#include <string.h>

#include "check.h"

static void expect_type(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                        MPI_Aint text, const char *what)
{
    int s;
    MPI_Aint l, e, tl, te;
    MPI_Count sx, lx, ex;
    CHECK_MPI(MPI_Type_size(t, &s));
    CHECK_MPI(MPI_Type_size_x(t, &sx));
    CHECK_MPI(MPI_Type_get_extent(t, &l, &e));
    CHECK_MPI(MPI_Type_get_extent_x(t, &lx, &ex));
    CHECK_MPI(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(s == size && sx == size, "%s: size expected %d got %d", what, size, s);
    CHECK(l == lb && e == ext && lx == lb && ex == ext,
          "%s: lb/extent expected %td/%td got %td/%td", what, (ptrdiff_t)lb, (ptrdiff_t)ext,
          (ptrdiff_t)l, (ptrdiff_t)e);
    CHECK(tl == tlb && te == text, "%s: true lb/extent expected %td/%td got %td/%td", what,
          (ptrdiff_t)tlb, (ptrdiff_t)text, (ptrdiff_t)tl, (ptrdiff_t)te);
}

static void expect_envelope(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what)
{
    int a, b, c, d;
    CHECK_MPI(MPI_Type_get_envelope(t, &a, &b, &c, &d));
    CHECK(a == ni && b == na && c == nd && d == comb,
          "%s: envelope expected %d/%d/%d/%d got %d/%d/%d/%d", what, ni, na, nd, comb, a, b, c, d);
}

static void constructors(void)
{
    MPI_Datatype t, u;
    /* vector(3, 2, 4) of int: blocks at 0, 16, 32 of 8 bytes -> extent 40 */
    CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    expect_type(t, 24, 0, 40, 0, 40, "vector");
    expect_envelope(t, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
    int ints[8];
    MPI_Aint ad[8];
    MPI_Datatype ty[8];
    CHECK_MPI(MPI_Type_get_contents(t, 8, 8, 8, ints, ad, ty));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && ty[0] == MPI_INT, "vector contents");
    /* negative stride: blocks at 0 and -16 */
    CHECK_MPI(MPI_Type_vector(2, 1, -4, MPI_INT, &u));
    expect_type(u, 8, -16, 20, -16, 20, "vector with negative stride");
    CHECK_MPI(MPI_Type_free(&u));
    /* hvector(2, 1, 100) of the vector: second copy at 100 */
    CHECK_MPI(MPI_Type_create_hvector(2, 1, 100, t, &u));
    expect_type(u, 48, 0, 140, 0, 140, "hvector");
    expect_envelope(u, 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
    CHECK_MPI(MPI_Type_get_contents(u, 8, 8, 8, ints, ad, ty));
    CHECK(ints[0] == 2 && ints[1] == 1 && ad[0] == 100, "hvector contents");
    /* the returned derived type is a new handle to the vector */
    expect_type(ty[0], 24, 0, 40, 0, 40, "contents' vector");
    CHECK_MPI(MPI_Type_free(&ty[0]));
    CHECK_MPI(MPI_Type_free(&u));
    CHECK_MPI(MPI_Type_free(&t));

    int bl[3] = {2, 1, 3}, dp[3] = {4, 0, 10};
    CHECK_MPI(MPI_Type_indexed(3, bl, dp, MPI_DOUBLE, &t));
    expect_type(t, 48, 0, 104, 0, 104, "indexed");
    expect_envelope(t, 7, 0, 1, MPI_COMBINER_INDEXED, "indexed");
    CHECK_MPI(MPI_Type_free(&t));
    MPI_Aint hd[3] = {8, -4, 40};
    CHECK_MPI(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &t));
    expect_type(t, 24, -4, 56, -4, 56, "hindexed");
    expect_envelope(t, 4, 3, 1, MPI_COMBINER_HINDEXED, "hindexed");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_create_indexed_block(3, 2, dp, MPI_SHORT, &t));
    expect_type(t, 12, 0, 24, 0, 24, "indexed_block");
    expect_envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_create_hindexed_block(3, 2, hd, MPI_SHORT, &t));
    expect_type(t, 12, -4, 48, -4, 48, "hindexed_block");
    expect_envelope(t, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
    CHECK_MPI(MPI_Type_free(&t));

    /* struct {char; double} padded to 16 */
    int sb[2] = {1, 1};
    MPI_Aint sd[2] = {0, 8};
    MPI_Datatype st[2] = {MPI_CHAR, MPI_DOUBLE};
    CHECK_MPI(MPI_Type_create_struct(2, sb, sd, st, &t));
    expect_type(t, 9, 0, 16, 0, 16, "struct");
    expect_envelope(t, 3, 2, 2, MPI_COMBINER_STRUCT, "struct");
    /* struct {double; char}: true extent 9, extent padded to 16 */
    MPI_Aint sd2[2] = {8, 0};
    CHECK_MPI(MPI_Type_create_struct(2, sb, sd2, st, &u));
    expect_type(u, 9, 0, 16, 0, 9, "struct reversed");
    CHECK_MPI(MPI_Type_free(&u));
    MPI_Datatype st2[2] = {MPI_DOUBLE, MPI_CHAR};
    MPI_Aint sd3[2] = {0, 8};
    CHECK_MPI(MPI_Type_create_struct(2, sb, sd3, st2, &u));
    expect_type(u, 9, 0, 16, 0, 9, "struct {double, char}");
    CHECK_MPI(MPI_Type_free(&u));

    /* resized: lb -8, extent 32 */
    CHECK_MPI(MPI_Type_create_resized(t, -8, 32, &u));
    expect_type(u, 9, -8, 32, 0, 16, "resized");
    expect_envelope(u, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
    CHECK_MPI(MPI_Type_get_contents(u, 0, 2, 1, ints, ad, ty));
    CHECK(ad[0] == -8 && ad[1] == 32, "resized contents %td %td", (ptrdiff_t)ad[0],
          (ptrdiff_t)ad[1]);
    CHECK_MPI(MPI_Type_free(&ty[0]));
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_dup(u, &v));
    expect_type(v, 9, -8, 32, 0, 16, "dup");
    expect_envelope(v, 0, 0, 1, MPI_COMBINER_DUP, "dup");
    CHECK_MPI(MPI_Type_free(&v));
    CHECK_MPI(MPI_Type_free(&u));
    CHECK_MPI(MPI_Type_contiguous(4, t, &u));
    expect_type(u, 36, 0, 64, 0, 64, "contiguous of struct");
    expect_envelope(u, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
    CHECK_MPI(MPI_Type_free(&u));
    CHECK_MPI(MPI_Type_free(&t));

    /* subarray 2-D, C and Fortran order */
    int sz[2] = {10, 20}, sub[2] = {3, 4}, stt[2] = {2, 5};
    CHECK_MPI(MPI_Type_create_subarray(2, sz, sub, stt, MPI_ORDER_C, MPI_INT, &t));
    /* C: first byte (2*20+5)*4 = 180, last (4*20+8)*4+4 = 356 */
    expect_type(t, 48, 0, 800, 180, 176, "subarray C");
    expect_envelope(t, 8, 0, 1, MPI_COMBINER_SUBARRAY, "subarray");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_create_subarray(2, sz, sub, stt, MPI_ORDER_FORTRAN, MPI_INT, &t));
    /* Fortran: index i + 10 j; first (2 + 50)*4 = 208, last (4 + 80)*4 + 4 = 340 */
    expect_type(t, 48, 0, 800, 208, 132, "subarray Fortran");
    CHECK_MPI(MPI_Type_free(&t));
    /* darray: 1-D block of 10 over 3 processes, rank 2 gets 8..9 */
    int gs = 10, di = MPI_DISTRIBUTE_BLOCK, da = MPI_DISTRIBUTE_DFLT_DARG, ps = 3;
    CHECK_MPI(MPI_Type_create_darray(3, 2, 1, &gs, &di, &da, &ps, MPI_ORDER_C, MPI_INT, &t));
    expect_type(t, 8, 0, 40, 32, 8, "darray block");
    expect_envelope(t, 8, 0, 1, MPI_COMBINER_DARRAY, "darray");
    CHECK_MPI(MPI_Type_free(&t));
    di = MPI_DISTRIBUTE_CYCLIC;
    CHECK_MPI(MPI_Type_create_darray(3, 1, 1, &gs, &di, &da, &ps, MPI_ORDER_C, MPI_INT, &t));
    expect_type(t, 12, 0, 40, 4, 28, "darray cyclic"); /* 1, 4, 7 */
    CHECK_MPI(MPI_Type_free(&t));

    /* predefined */
    expect_envelope(MPI_DOUBLE_INT, 0, 0, 0, MPI_COMBINER_NAMED, "MPI_DOUBLE_INT");
    expect_type(MPI_DOUBLE_INT, 12, 0, 16, 0, 12, "MPI_DOUBLE_INT");
    expect_type(MPI_C_DOUBLE_COMPLEX, 16, 0, 16, 0, 16, "MPI_C_DOUBLE_COMPLEX");
    MPI_Datatype m;
    CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    int msz;
    CHECK_MPI(MPI_Type_size(m, &msz));
    CHECK(msz == 8, "Type_match_size(REAL, 8) gave a type of size %d", msz);
}

static void names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_MPI(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "name of MPI_INT: %s", name);
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_MPI(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0 && name[0] == 0, "unnamed type has name %s", name);
    CHECK_MPI(MPI_Type_set_name(t, "pair of ints"));
    CHECK_MPI(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "name: %s", name);
    CHECK_MPI(MPI_Type_free(&t));
}

static void packing(void)
{
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(4, 1, 3, MPI_INT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    int a[12], b[12], psz;
    for (int i = 0; i < 12; i++)
        a[i] = i, b[i] = -1;
    CHECK_MPI(MPI_Pack_size(1, v, MPI_COMM_WORLD, &psz));
    CHECK(psz >= 16, "Pack_size expected >= 16 got %d", psz);
    char buf[64];
    int pos = 0, one = 99;
    CHECK_MPI(MPI_Pack(&one, 1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(a, 1, v, buf, 64, &pos, MPI_COMM_WORLD));
    int packed = pos, x;
    pos = 0;
    CHECK_MPI(MPI_Unpack(buf, packed, &pos, &x, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(buf, packed, &pos, b, 1, v, MPI_COMM_WORLD));
    CHECK(x == 99 && pos == packed, "unpack int %d pos %d/%d", x, pos, packed);
    for (int i = 0; i < 12; i++)
        CHECK(b[i] == (i % 3 ? -1 : i), "unpacked b[%d] = %d", i, b[i]);

    /* external32: big-endian, MPI_LONG in 4 bytes, a pair without padding */
    unsigned char e[64];
    MPI_Aint ep = 0, esz;
    int iv = 0x01020304;
    long lv = -2;
    struct {
        double v;
        int i;
    } di = {1.0, 7};
    CHECK_MPI(MPI_Pack_external("external32", &iv, 1, MPI_INT, e, 64, &ep));
    CHECK_MPI(MPI_Pack_external("external32", &lv, 1, MPI_LONG, e, 64, &ep));
    CHECK_MPI(MPI_Pack_external("external32", &di, 1, MPI_DOUBLE_INT, e, 64, &ep));
    CHECK(ep == 4 + 4 + 12, "external32 position expected 20 got %td", (ptrdiff_t)ep);
    CHECK(e[0] == 1 && e[1] == 2 && e[2] == 3 && e[3] == 4, "int not big-endian: %02x%02x%02x%02x",
          e[0], e[1], e[2], e[3]);
    CHECK(e[4] == 0xff && e[7] == 0xfe, "long -2 as %02x..%02x", e[4], e[7]);
    CHECK(e[8] == 0x3f && e[9] == 0xf0 && e[19] == 7, "double_int 1.0/7: %02x %02x .. %02x", e[8],
          e[9], e[19]);
    CHECK_MPI(MPI_Pack_external_size("external32", 3, MPI_DOUBLE_INT, &esz));
    CHECK(esz == 36, "Pack_external_size(3 x DOUBLE_INT) expected 36 got %td", (ptrdiff_t)esz);
    int iv2;
    long lv2;
    ep = 0;
    CHECK_MPI(MPI_Unpack_external("external32", e, 20, &ep, &iv2, 1, MPI_INT));
    CHECK_MPI(MPI_Unpack_external("external32", e, 20, &ep, &lv2, 1, MPI_LONG));
    CHECK(iv2 == iv && lv2 == lv, "external32 round trip %x %ld", iv2, lv2);
    /* several pairs with padding inside (MPI_SHORT_INT: 2 + 4 bytes each) there and back */
    struct {
        short v;
        int i;
    } si[3] = {{1, 0x0a0b0c0d}, {-2, 5}, {300, -1}}, si2[3];
    unsigned char x32[64];
    ep = 0;
    CHECK_MPI(MPI_Pack_external("external32", si, 3, MPI_SHORT_INT, x32, 64, &ep));
    CHECK(ep == 18 && x32[0] == 0 && x32[1] == 1 && x32[2] == 0x0a && x32[5] == 0x0d &&
              x32[6] == 0xff && x32[7] == 0xfe && x32[11] == 5 && x32[12] == 1 && x32[13] == 44 &&
              x32[17] == 0xff,
          "3 x MPI_SHORT_INT as external32: %td bytes, %02x%02x %02x..%02x %02x%02x", ep, x32[0],
          x32[1], x32[2], x32[5], x32[6], x32[7]);
    memset(si2, 0, sizeof si2);
    ep = 0;
    CHECK_MPI(MPI_Unpack_external("external32", x32, 18, &ep, si2, 3, MPI_SHORT_INT));
    for (int k = 0; k < 3; k++)
        CHECK(si2[k].v == si[k].v && si2[k].i == si[k].i, "MPI_SHORT_INT %d back as %d/%d", k,
              si2[k].v, si2[k].i);
    /* a vector through external32 */
    ep = 0;
    CHECK_MPI(MPI_Pack_external("external32", a, 1, v, e, 64, &ep));
    CHECK(ep == 16 && e[15] == 9, "vector external32: %td bytes, last %d", (ptrdiff_t)ep, e[15]);
    for (int i = 0; i < 12; i++)
        b[i] = -1;
    ep = 0;
    CHECK_MPI(MPI_Unpack_external("external32", e, 16, &ep, b, 1, v));
    for (int i = 0; i < 12; i++)
        CHECK(b[i] == (i % 3 ? -1 : i), "external32 unpacked b[%d] = %d", i, b[i]);
    CHECK_MPI(MPI_Type_free(&v));
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;
    int cls;
    MPI_Error_class(MPI_Type_contiguous(-1, MPI_INT, &t), &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count: expected MPI_ERR_COUNT got %d", cls);
    MPI_Error_class(MPI_Type_vector(2, 1, 1, MPI_DATATYPE_NULL, &t), &cls);
    CHECK(cls == MPI_ERR_TYPE, "MPI_DATATYPE_NULL: expected MPI_ERR_TYPE got %d", cls);
    int bl = -1, dp = 0;
    MPI_Error_class(MPI_Type_indexed(1, &bl, &dp, MPI_INT, &t), &cls);
    CHECK(cls == MPI_ERR_ARG, "negative block length: expected MPI_ERR_ARG got %d", cls);
    /* an uncommitted type in communication */
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    int x[2] = {0, 0};
    MPI_Error_class(MPI_Send(x, 1, t, 0, 0, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_TYPE, "uncommitted type in MPI_Send: expected MPI_ERR_TYPE got %d", cls);
    MPI_Error_class(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), &cls);
    CHECK(cls == MPI_ERR_TYPE, "contents of a named type: expected MPI_ERR_TYPE got %d", cls);
    MPI_Datatype p = MPI_INT;
    MPI_Error_class(MPI_Type_free(&p), &cls);
    CHECK(cls == MPI_ERR_TYPE, "freeing MPI_INT: expected MPI_ERR_TYPE got %d", cls);
    int sz[1] = {4}, sub[1] = {5}, st[1] = {0};
    MPI_Error_class(MPI_Type_create_subarray(1, sz, sub, st, MPI_ORDER_C, MPI_INT, &p), &cls);
    CHECK(cls == MPI_ERR_ARG, "subarray larger than the array: expected MPI_ERR_ARG got %d", cls);
    char buf[4];
    int pos = 0;
    CHECK_MPI(MPI_Type_commit(&t));
    MPI_Error_class(MPI_Pack(x, 1, t, buf, 4, &pos, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "Pack into too small a buffer: expected MPI_ERR_TRUNCATE got %d",
          cls);
    MPI_Aint ep = 0;
    MPI_Error_class(MPI_Pack_external("native", x, 1, MPI_INT, buf, 4, &ep), &cls);
    CHECK(cls == MPI_ERR_UNSUPPORTED_DATAREP, "datarep native: got %d", cls);
    CHECK_MPI(MPI_Type_free(&t));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static int deleted;

static int count_delete(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)extra;
    deleted += *(int *)val;
    return MPI_SUCCESS;
}

/* Type_create_keyval / set / get / delete, copied by Type_dup, deleted by Type_free. */
static void attributes(void)
{
    int key, v = 5, *got = NULL, flag = 0;
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, NULL));
    MPI_Datatype t, u;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
    CHECK_MPI(MPI_Type_get_attr(t, key, &got, &flag));
    CHECK(flag == 0, "attribute before set: flag %d", flag);
    CHECK_MPI(MPI_Type_set_attr(t, key, &v));
    CHECK_MPI(MPI_Type_get_attr(t, key, &got, &flag));
    CHECK(flag == 1 && got == &v, "attribute: flag %d value %p (want %p)", flag, (void *)got,
          (void *)&v);
    CHECK_MPI(MPI_Type_dup(t, &u));
    got = NULL;
    CHECK_MPI(MPI_Type_get_attr(u, key, &got, &flag));
    CHECK(flag == 1 && got == &v, "attribute of the dup: flag %d", flag);
    deleted = 0;
    CHECK_MPI(MPI_Type_free(&u));
    CHECK(deleted == 5, "Type_free ran the delete callback %d times (x5)", deleted / 5);
    CHECK_MPI(MPI_Type_delete_attr(t, key));
    CHECK(deleted == 10, "Type_delete_attr did not run the delete callback");
    CHECK_MPI(MPI_Type_get_attr(t, key, &got, &flag));
    CHECK(flag == 0, "deleted attribute still there");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "Type_free_keyval did not reset the keyval");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    constructors();
    names();
    attributes();
    packing();
    errors();
    MPI_Aint a1, a2;
    int arr[4];
    CHECK_MPI(MPI_Get_address(&arr[0], &a1));
    CHECK_MPI(MPI_Get_address(&arr[3], &a2));
    CHECK(MPI_Aint_diff(a2, a1) == 12 && MPI_Aint_add(a1, 12) == a2, "Aint_add/diff");
    return finish_ok();
}
