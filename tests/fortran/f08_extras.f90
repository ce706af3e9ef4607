! f08_extras.f90: the mpi_f08 bindings with Fortran callbacks and the MPI 4 names:
! generalized requests (query/free/cancel procedures), sessions and process sets
! (CHARACTER pset names, info, a Fortran error handler), a user data representation (conversion procedures), MPI_Sizeof,
! MPI_Register_datarep_c (conversion procedures with an MPI_COUNT_KIND count), the status conversions
! MPI_Status_f2f08 / MPI_Status_f082f (and their PMPI names),
! MPI_F_sync_reg, the specific procedures (PMPI_Send_f08, a tool's own MPI_Barrier_f08
! wins over the library's) and a large-count call (MPI_Send with an MPI_COUNT_KIND count).
module f08x_state
  use mpi_f08, only: MPI_ADDRESS_KIND
  implicit none
  integer :: freed = 0, cancelled = 0, barriers = 0, session_errors = 0, last_code = 0
  integer(kind=MPI_ADDRESS_KIND) :: seen_extra = 0
  logical :: cancel_complete = .true.
end module

module f08x_callbacks
  use mpi_f08
  use f08x_state
  implicit none
contains
  subroutine gq_query(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    type(MPI_Status) :: status
    integer :: ierror
    seen_extra = extra
    status%MPI_TAG = 42
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierror)
  end subroutine
  subroutine gq_free(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    freed = freed + int(extra)
    ierror = MPI_SUCCESS
  end subroutine
  subroutine gq_cancel(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    cancelled = cancelled + 1
    cancel_complete = complete
    ierror = MPI_SUCCESS
  end subroutine
  ! datarep "f08x_plus": an integer is stored as its value + extra_state
  subroutine rep_write(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*)
    type(MPI_Datatype) :: datatype
    integer :: count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: i
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER) ierror = MPI_ERR_TYPE
    do i = 1, count
      filebuf(i) = userbuf(position + i) + int(extra)
    end do
  end subroutine
  subroutine rep_read(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*)
    type(MPI_Datatype) :: datatype
    integer :: count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: i
    ierror = MPI_SUCCESS
    do i = 1, count
      userbuf(position + i) = filebuf(i) - int(extra)
    end do
  end subroutine
  ! datarep "f08x_minus" (MPI_Register_datarep_c): stored as the value - extra_state
  subroutine rep_write_c(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*)
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_COUNT_KIND) :: count
    integer :: ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer(kind=MPI_COUNT_KIND) :: i
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER) ierror = MPI_ERR_TYPE
    do i = 1, count
      filebuf(i) = userbuf(position + i) - int(extra)
    end do
  end subroutine
  subroutine rep_read_c(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*)
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_COUNT_KIND) :: count
    integer :: ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer(kind=MPI_COUNT_KIND) :: i
    ierror = MPI_SUCCESS
    do i = 1, count
      userbuf(position + i) = filebuf(i) + int(extra)
    end do
  end subroutine
  subroutine on_session_error(session, code)
    type(MPI_Session) :: session
    integer :: code
    session_errors = session_errors + 1
    last_code = code
  end subroutine
  subroutine rep_extent(datatype, extent, extra, ierror)
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra
    integer :: ierror
    extent = 4
    ierror = MPI_SUCCESS
  end subroutine
end module

! A profiling tool's specific procedure: defined by the program, it replaces the library's
! (weak) MPI_Barrier_f08 and reaches MPI through PMPI_Barrier.
subroutine MPI_Barrier_f08(comm, ierror)
  use mpi_f08, only: MPI_Comm, PMPI_Barrier
  use f08x_state
  type(MPI_Comm) :: comm
  integer, optional, intent(out) :: ierror
  barriers = barriers + 1
  call PMPI_Barrier(comm, ierror)
end subroutine

program f08_extras
  use mpi_f08
  use f08x_state
  use f08x_callbacks
  implicit none
  integer :: rank, np, ierr, cnt, i, n, plen, gsize, sz, found
  type(MPI_Request) :: req
  type(MPI_Status) :: st
  type(MPI_Session) :: session
  type(MPI_Errhandler) :: eh, eh2
  type(MPI_Group) :: grp
  type(MPI_Info) :: info
  type(MPI_File) :: fh
  type(MPI_Datatype) :: etype, ftype
  integer(kind=MPI_OFFSET_KIND) :: disp
  logical :: flag
  character(len=:), allocatable :: pname
  character(len=64) :: val
  integer :: vals(3), raw(3), back(3), buf(4)
  integer(kind=MPI_COUNT_KIND) :: bigcount
  integer :: fst(MPI_STATUS_SIZE)
  type(MPI_Status) :: st2
  integer(kind=1) :: i1
  integer(kind=8) :: i8(5)
  real(kind=8) :: r8(2, 2)
  complex(kind=8) :: z
  logical :: lg
  character(len=*), parameter :: fname = 'f08x_datarep.dat'

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)

  ! generalized request: query sets the status, free runs once with our extra_state
  call MPI_Grequest_start(gq_query, gq_free, gq_cancel, 5_MPI_ADDRESS_KIND, req, ierr)
  if (ierr /= MPI_SUCCESS) error stop 10
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, st)
  if (st%MPI_TAG /= 42 .or. seen_extra /= 5 .or. freed /= 5) error stop 11
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (cnt /= 3 .or. req /= MPI_REQUEST_NULL) error stop 12
  call MPI_Grequest_start(gq_query, gq_free, gq_cancel, 1_MPI_ADDRESS_KIND, req)
  call MPI_Cancel(req)
  if (cancelled /= 1 .or. cancel_complete) error stop 13
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (freed /= 6) error stop 14

  ! sessions: the names of the process sets, their groups and info
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  if (ierr /= MPI_SUCCESS .or. session == MPI_SESSION_NULL) error stop 20
  call MPI_Session_get_num_psets(session, MPI_INFO_NULL, n)
  found = 0
  do i = 0, n - 1
    plen = 0
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, plen, val)
    allocate(character(len=plen) :: pname)
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, plen, pname)
    if (pname == 'mpi://WORLD') found = found + 1
    if (pname == 'mpi://SELF') found = found + 10
    deallocate(pname)
  end do
  if (found /= 11) error stop 21
  call MPI_Group_from_session_pset(session, 'mpi://WORLD', grp)
  call MPI_Group_size(grp, gsize)
  if (gsize /= np) error stop 22
  call MPI_Group_free(grp)
  call MPI_Session_get_pset_info(session, 'mpi://WORLD', info)
  call MPI_Info_get(info, 'mpi_size', 64, val, flag)
  if (.not. flag) error stop 23
  read (val, *) sz
  if (sz /= np) error stop 24
  call MPI_Info_free(info)
  call MPI_Session_get_info(session, info)
  if (info == MPI_INFO_NULL) error stop 26
  call MPI_Info_free(info)
  call MPI_Session_create_errhandler(on_session_error, eh)
  call MPI_Session_set_errhandler(session, eh)
  call MPI_Session_get_errhandler(session, eh2)
  if (eh2 /= eh) error stop 27
  call MPI_Session_call_errhandler(session, MPI_ERR_OTHER)
  if (session_errors /= 1 .or. last_code /= MPI_ERR_OTHER) error stop 28
  call MPI_Errhandler_free(eh2)
  call MPI_Errhandler_free(eh)
  call MPI_Session_finalize(session)
  if (session /= MPI_SESSION_NULL) error stop 25

  ! a user data representation: rank r writes r*10+1.. through it; the file holds +1000
  call MPI_Register_datarep('f08x_plus', rep_read, rep_write, rep_extent, &
                            1000_MPI_ADDRESS_KIND, ierr)
  if (ierr /= MPI_SUCCESS) error stop 30
  vals = [(rank * 10 + i, i = 1, 3)]
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, &
                     fh, ierr)
  if (ierr /= MPI_SUCCESS) error stop 31
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'f08x_plus', &
                         MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) error stop 32
  call MPI_File_write_at_all(fh, int(rank * 3, MPI_OFFSET_KIND), vals, 3, MPI_INTEGER, st)
  call MPI_File_read_at_all(fh, int(rank * 3, MPI_OFFSET_KIND), back, 3, MPI_INTEGER, st)
  if (any(back /= vals)) error stop 33
  call MPI_File_get_view(fh, disp, etype, ftype, val)
  if (val /= 'f08x_plus' .or. etype /= MPI_INTEGER) error stop 35
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
                         MPI_INFO_NULL)
  call MPI_File_read_at_all(fh, int(rank * 3, MPI_OFFSET_KIND), raw, 3, MPI_INTEGER, st)
  if (any(raw /= vals + 1000)) error stop 34
  call MPI_File_close(fh)

  ! the large-count form: "f08x_minus" stores value - 500 (conversion count MPI_COUNT_KIND)
  call MPI_Register_datarep_c('f08x_minus', rep_read_c, rep_write_c, rep_extent, &
                              500_MPI_ADDRESS_KIND, ierr)
  if (ierr /= MPI_SUCCESS) error stop 36
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'f08x_minus', &
                         MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) error stop 37
  call MPI_File_write_at_all(fh, int(rank * 3, MPI_OFFSET_KIND), vals, 3, MPI_INTEGER, st)
  back = 0
  call MPI_File_read_at_all(fh, int(rank * 3, MPI_OFFSET_KIND), back, 3, MPI_INTEGER, st)
  if (any(back /= vals)) error stop 38
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
                         MPI_INFO_NULL)
  call MPI_File_read_at_all(fh, int(rank * 3, MPI_OFFSET_KIND), raw, 3, MPI_INTEGER, st)
  if (any(raw /= vals - 500)) error stop 39
  call MPI_File_close(fh)
  ! a second registration of a name is an error, in the large-count form too
  call MPI_Register_datarep_c('f08x_minus', MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C, &
                              rep_extent, 0_MPI_ADDRESS_KIND, ierr)
  if (ierr == MPI_SUCCESS) error stop 70

  ! status conversions keep everything, hidden parts included (the count)
  call MPI_Status_set_elements(st, MPI_INTEGER, 5)
  st%MPI_SOURCE = 3
  st%MPI_TAG = 44
  fst = -1
  call MPI_Status_f082f(st, fst, ierr)
  if (ierr /= MPI_SUCCESS .or. fst(MPI_SOURCE) /= 3 .or. fst(MPI_TAG) /= 44) error stop 71
  call MPI_Status_f2f08(fst, st2)
  if (st2%MPI_SOURCE /= 3 .or. st2%MPI_TAG /= 44) error stop 72
  call MPI_Get_count(st2, MPI_INTEGER, cnt)
  if (cnt /= 5) error stop 73
  fst(MPI_TAG) = 45
  call PMPI_Status_f2f08(fst, st2, ierr)
  call PMPI_Status_f082f(st2, fst)
  if (ierr /= MPI_SUCCESS .or. st2%MPI_TAG /= 45 .or. fst(MPI_TAG) /= 45) error stop 74

  ! MPI_Sizeof over kinds and ranks
  call MPI_Sizeof(i1, sz)
  if (sz /= 1) error stop 40
  call MPI_Sizeof(i8, sz, ierr)
  if (sz /= 8 .or. ierr /= MPI_SUCCESS) error stop 41
  call MPI_Sizeof(r8, sz)
  if (sz /= 8) error stop 42
  call MPI_Sizeof(z, sz)
  if (sz /= 16) error stop 43
  call MPI_Sizeof(lg, sz)
  if (sz /= 4) error stop 44

  ! PMPI specific names, MPI_F_sync_reg, a large-count send, the tool's barrier
  buf = rank
  if (np >= 2) then
    if (rank == 0) then
      bigcount = 4
      call MPI_Send(buf, bigcount, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
      call PMPI_Send_f08(buf, 4, MPI_INTEGER, 1, 8, MPI_COMM_WORLD)
    else if (rank == 1) then
      call MPI_Recv(buf, 4, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, st)
      call MPI_F_sync_reg(buf)
      if (any(buf /= 0)) error stop 50
      buf = -1
      call PMPI_Recv_f08(buf, 4, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, st)
      call MPI_Get_count(st, MPI_INTEGER, cnt)
      if (any(buf /= 0) .or. cnt /= 4) error stop 51
    end if
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (barriers /= 2 .or. ierr /= MPI_SUCCESS) error stop 52

  call MPI_Finalize()
  if (rank == 0) then
    open (unit=11, file=fname)
    close (11, status='delete')
    print '(a, i0)', 'f08 extras ok ', np
  end if
end program
