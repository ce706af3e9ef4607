! partitioned_f.f90 - the partitioned calls through module mpi: rank 0 sends 16 integers in 4
! partitions (Pready_range), rank 1 receives them and polls MPI_Parrived; prints OK from rank 1.
program pf
  use mpi
  implicit none
  integer :: ierr, me, req, i, buf(16)
  integer(kind=MPI_COUNT_KIND) :: cnt
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  cnt = 4
  if (me == 0) then
    buf = [(i, i = 1, 16)]
    call MPI_Psend_init(buf, 4, cnt, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
    call MPI_Start(req, ierr)
    call MPI_Pready_range(0, 3, req, ierr)
  else
    buf = 0
    call MPI_Precv_init(buf, 4, cnt, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
    call MPI_Start(req, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Parrived(req, 3, flag, ierr)
    end do
  end if
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Request_free(req, ierr)
  if (me == 1) then
    do i = 1, 16
      if (buf(i) /= i) stop 1
    end do
    print '(A)', 'OK'
  end if
  call MPI_Finalize(ierr)
end program
