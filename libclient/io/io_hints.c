/* io_hints.c — file hints (MPI 4.0 §14.2.8).
 *
 * Honoured: cb_buffer_size (bytes an aggregator moves per round), cb_nodes (how many
 * aggregators; at most one per node), romio_cb_read / romio_cb_write and collective_buffering
 * (enable, disable, automatic), ind_rd_buffer_size (how far a read sieve spans),
 * romio_ds_read (read sieving on or off), striping_unit (file-domain alignment of the
 * aggregators).  Every other key (striping_factor, cb_config_list, ind_wr_buffer_size,
 * access_style, file_perm, ...) is kept and reported as given: POSIX file systems here have
 * nothing to set with them.  MPI_File_get_info answers every hint with the value in effect.
 * A value that does not parse leaves the hint as it was (the standard lets hints be ignored). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "io.h"
#include "job.h"

void tm_io_hints_default(struct tm_io_hints *h)
{
    *h = (struct tm_io_hints){
        .cb_buffer_size = TM_IO_CB_BUFFER_DEFAULT,
        .cb_nodes = 0,
        .cb_read = TM_IO_CB_AUTO,
        .cb_write = TM_IO_CB_AUTO,
        .ind_rd_buffer_size = TM_IO_IND_RD_DEFAULT,
        .ds_read = 1,
    };
}

static int parse_size(const char *v, long long min, long long *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < min) return -1;
    *out = x;
    return 0;
}

static int parse_cb(const char *v, enum tm_io_cb *out)
{
    if (!strcmp(v, "enable") || !strcmp(v, "true"))
        *out = TM_IO_CB_ENABLE;
    else if (!strcmp(v, "disable") || !strcmp(v, "false"))
        *out = TM_IO_CB_DISABLE;
    else if (!strcmp(v, "automatic"))
        *out = TM_IO_CB_AUTO;
    else
        return -1;
    return 0;
}

static const char *cb_name(enum tm_io_cb c)
{
    return c == TM_IO_CB_ENABLE ? "enable" : c == TM_IO_CB_DISABLE ? "disable" : "automatic";
}

/* One key of info: 1 if it is a hint of ours (h updated when its value parses). */
static int known(struct tm_io_hints *h, const char *k, const char *v)
{
    long long x;
    if (!strcmp(k, "cb_buffer_size")) {
        if (!parse_size(v, (long long)TM_IO_CB_BUFFER_MIN, &x)) h->cb_buffer_size = (size_t)x;
    } else if (!strcmp(k, "cb_nodes")) {
        if (!parse_size(v, 1, &x) && x < (1 << 30)) h->cb_nodes = (int)x;
    } else if (!strcmp(k, "romio_cb_read")) {
        parse_cb(v, &h->cb_read);
    } else if (!strcmp(k, "romio_cb_write")) {
        parse_cb(v, &h->cb_write);
    } else if (!strcmp(k, "collective_buffering")) {
        enum tm_io_cb c;
        if (!parse_cb(v, &c)) h->cb_read = h->cb_write = c;
    } else if (!strcmp(k, "ind_rd_buffer_size")) {
        if (!parse_size(v, 0, &x)) h->ind_rd_buffer_size = (size_t)x;
    } else if (!strcmp(k, "romio_ds_read")) {
        enum tm_io_cb c;
        if (!parse_cb(v, &c)) h->ds_read = c != TM_IO_CB_DISABLE;
    } else if (!strcmp(k, "striping_unit")) {
        if (!parse_size(v, 1, &x)) h->striping_unit = (size_t)x;
    } else if (!strcmp(k, "striping_factor")) {
        if (!parse_size(v, 1, &x) && x < (1 << 30)) h->striping_factor = (int)x;
    } else {
        return 0;
    }
    return 1;
}

static void put_ll(MPI_Info in, const char *k, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    PMPI_Info_set(in, k, b);
}

/* Copies the keys of src that are not ours into dst. */
static void copy_other(MPI_Info dst, MPI_Info src)
{
    struct tm_io_hints scratch;
    int n = 0;
    if (src == MPI_INFO_NULL || PMPI_Info_get_nkeys(src, &n)) return;
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (PMPI_Info_get_nthkey(src, i, k)) continue;
        PMPI_Info_get(src, k, MPI_MAX_INFO_VAL, v, &flag);
        tm_io_hints_default(&scratch);
        if (flag && !known(&scratch, k, v)) PMPI_Info_set(dst, k, v);
    }
}

int tm_io_hints_apply(struct tm_file *f, MPI_Info info)
{
    if (f->info == MPI_INFO_NULL) tm_io_hints_default(&f->h);
    int n = 0;
    if (info != MPI_INFO_NULL) PMPI_Info_get_nkeys(info, &n);
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (PMPI_Info_get_nthkey(info, i, k)) continue;
        PMPI_Info_get(info, k, MPI_MAX_INFO_VAL, v, &flag);
        if (flag) known(&f->h, k, v);
    }
    /* aggregators: at most one per node (io_coll.c) */
    int lead = f->leaders != MPI_COMM_NULL, nodes = 1;
    PMPI_Allreduce(&lead, &nodes, 1, MPI_INT, MPI_SUM, f->comm);
    if (f->h.cb_nodes <= 0 || f->h.cb_nodes > nodes) f->h.cb_nodes = nodes;

    MPI_Info used;
    if (PMPI_Info_create(&used)) return MPI_ERR_NO_MEM;
    put_ll(used, "cb_buffer_size", (long long)f->h.cb_buffer_size);
    put_ll(used, "cb_nodes", f->h.cb_nodes);
    PMPI_Info_set(used, "romio_cb_read", cb_name(f->h.cb_read));
    PMPI_Info_set(used, "romio_cb_write", cb_name(f->h.cb_write));
    put_ll(used, "ind_rd_buffer_size", (long long)f->h.ind_rd_buffer_size);
    PMPI_Info_set(used, "romio_ds_read", f->h.ds_read ? "automatic" : "disable");
    if (f->h.striping_unit) put_ll(used, "striping_unit", (long long)f->h.striping_unit);
    if (f->h.striping_factor) put_ll(used, "striping_factor", f->h.striping_factor);
    copy_other(used, f->info);
    copy_other(used, info);
    if (f->info != MPI_INFO_NULL) PMPI_Info_free(&f->info);
    f->info = used;
    return MPI_SUCCESS;
}
