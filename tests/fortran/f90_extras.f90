! f90_extras.f90: module mpi's MPI_Sizeof (generic over kinds, scalars and arrays),
! MPI_F_sync_reg, a generalized request with INTEGER-array statuses in its query procedure,
! MPI_CONVERSION_FN_NULL in MPI_Register_datarep (and _C in MPI_Register_datarep_c), the
! session calls with INTEGER handles, and MPI_Status_f082f / _f2f08 with module mpi's
! TYPE(MPI_Status).
module f90x_callbacks
  use mpi
  implicit none
  integer :: freed = 0
contains
  subroutine gq_query(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierror
    status(MPI_TAG) = int(extra)
    call MPI_Status_set_elements(status, MPI_REAL, 2, ierror)
  end subroutine
  subroutine gq_free(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    freed = freed + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine gq_cancel(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    ierror = MPI_SUCCESS
  end subroutine
  subroutine rep_extent(datatype, extent, extra, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra
    extent = 4
    ierror = MPI_SUCCESS
  end subroutine
end module

program f90_extras
  use mpi
  use f90x_callbacks
  implicit none
  integer :: ierr, sz, rank, np, req, st(MPI_STATUS_SIZE), cnt, session, n, fh
  integer(kind=2) :: i2(3)
  real(kind=4) :: r4
  real(kind=16) :: q
  complex(kind=4) :: c4(2, 2, 2)
  logical(kind=1) :: l1
  integer :: v(2), back(2)
  character(len=32) :: fname
  type(MPI_Status) :: st08

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call MPI_Sizeof(i2, sz, ierr)
  if (sz /= 2 .or. ierr /= MPI_SUCCESS) error stop 1
  call MPI_Sizeof(r4, sz, ierr)
  if (sz /= 4) error stop 2
  call MPI_Sizeof(q, sz, ierr)
  if (sz /= 16) error stop 3
  call MPI_Sizeof(c4, sz, ierr)
  if (sz /= 8) error stop 4
  call MPI_Sizeof(l1, sz, ierr)
  if (sz /= 1) error stop 5
  call PMPI_Sizeof(sz, cnt, ierr)
  if (cnt /= 4) error stop 6
  call MPI_F_sync_reg(sz)

  call MPI_Grequest_start(gq_query, gq_free, gq_cancel, 77_MPI_ADDRESS_KIND, req, ierr)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, st, ierr)
  call MPI_Get_count(st, MPI_REAL, cnt, ierr)
  if (st(MPI_TAG) /= 77 .or. cnt /= 2 .or. freed /= 1 .or. req /= MPI_REQUEST_NULL) error stop 7
  call MPI_Status_f2f08(st, st08, ierr)
  if (ierr /= MPI_SUCCESS .or. st08%MPI_TAG /= 77) error stop 20
  st = 0
  call MPI_Status_f082f(st08, st, ierr)
  call MPI_Get_count(st, MPI_REAL, cnt, ierr)
  if (st(MPI_TAG) /= 77 .or. cnt /= 2) error stop 21

  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  call MPI_Session_get_num_psets(session, MPI_INFO_NULL, n, ierr)
  if (ierr /= MPI_SUCCESS .or. n < 2) error stop 8
  call MPI_Session_finalize(session, ierr)
  if (session /= MPI_SESSION_NULL) error stop 9

  ! no conversion functions: the file holds the native bytes, the extent procedure is called
  call MPI_Register_datarep('f90x_same', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                            rep_extent, 0_MPI_ADDRESS_KIND, ierr)
  if (ierr /= MPI_SUCCESS) error stop 10
  write (fname, '(a, i0, a)') 'f90x_', rank, '.dat'
  call MPI_File_open(MPI_COMM_SELF, trim(fname), MPI_MODE_CREATE + MPI_MODE_RDWR + &
                     MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh, ierr)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'f90x_same', &
                         MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) error stop 11
  v = [rank, 5]
  call MPI_File_write(fh, v, 2, MPI_INTEGER, st, ierr)
  call MPI_File_seek(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  call MPI_File_read(fh, back, 2, MPI_INTEGER, st, ierr)
  if (any(back /= v)) error stop 12
  call MPI_File_close(fh, ierr)
  call MPI_Register_datarep_c('f90x_same_c', MPI_CONVERSION_FN_NULL_C, &
                              MPI_CONVERSION_FN_NULL_C, rep_extent, 0_MPI_ADDRESS_KIND, ierr)
  if (ierr /= MPI_SUCCESS) error stop 13
  call MPI_File_open(MPI_COMM_SELF, trim(fname), MPI_MODE_CREATE + MPI_MODE_RDWR + &
                     MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh, ierr)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'f90x_same_c', &
                         MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) error stop 14
  call MPI_File_write(fh, v, 2, MPI_INTEGER, st, ierr)
  call MPI_File_seek(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  back = 0
  call MPI_File_read(fh, back, 2, MPI_INTEGER, st, ierr)
  if (any(back /= v)) error stop 15
  call MPI_File_close(fh, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a, i0)', 'f90 extras ok ', np
end program
