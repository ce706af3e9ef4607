/* io_errh.c — error handlers on files (MPI 4.0 §9.3.4): each file has its own, inherited at
 * open from MPI_FILE_NULL's, which is MPI_ERRORS_RETURN until the program changes it (I/O
 * errors are expected to be handled, §14.7). */
#include "errh.h"
#include "io.h"
#include "job.h"
#include "objs.h"

TM_API int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    struct tm_rank *me = tm_self();
    const char *fn = "MPI_File_set_errhandler";
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_file *f = NULL;
    if (file != MPI_FILE_NULL && !(f = tm_file_get(me, file)))
        return tm_io_err(me, NULL, MPI_ERR_FILE, fn, "invalid file %d", file);
    if (tm_errh_check(me, errhandler, TM_EH_FILE))
        return tm_io_err(me, f, MPI_ERR_ERRHANDLER, fn, "invalid error handler %d", errhandler);
    tm_errh_ref(me, errhandler);
    MPI_Errhandler *slot = f ? &f->eh : &me->objs->file_eh;
    MPI_Errhandler old = *slot;
    *slot = errhandler;
    tm_errh_unref(me, old);
    return MPI_SUCCESS;
}
TM_ALIAS(File_set_errhandler)

TM_API int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    struct tm_rank *me = tm_self();
    const char *fn = "MPI_File_get_errhandler";
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_file *f = NULL;
    if (file != MPI_FILE_NULL && !(f = tm_file_get(me, file)))
        return tm_io_err(me, NULL, MPI_ERR_FILE, fn, "invalid file %d", file);
    if (!errhandler) return tm_io_err(me, f, MPI_ERR_ARG, fn, "errhandler is NULL");
    MPI_Errhandler eh = f ? f->eh : me->objs->file_eh;
    tm_errh_ref(me, eh);
    *errhandler = eh;
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_errhandler)

TM_API int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    struct tm_rank *me = tm_self();
    const char *fn = "MPI_File_call_errhandler";
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_file *f = NULL;
    if (fh != MPI_FILE_NULL && !(f = tm_file_get(me, fh)))
        return tm_io_err(me, NULL, MPI_ERR_FILE, fn, "invalid file %d", fh);
    tm_io_err(me, f, errorcode, fn, "called by the program");
    return MPI_SUCCESS;
}
TM_ALIAS(File_call_errhandler)
