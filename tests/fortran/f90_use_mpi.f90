! f90_use_mpi.f90: module mpi from free form: Sendrecv, Waitany indices (1-based),
! MINLOC on 2REAL, MPI_IN_PLACE, info strings (blank padding, trimming), 2INTEGER.
program f90_use_mpi
  use mpi
  implicit none
  integer :: rank, np, ierr, st(MPI_STATUS_SIZE), info, idx, reqs(2), r, s
  real :: pr(2), prs(2)
  integer :: ip(2), ips(2)
  logical :: flag
  character(len=40) :: value
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, modulo(rank + 1, np), 1, r, 1, MPI_INTEGER, &
                    modulo(rank - 1, np), 1, MPI_COMM_WORLD, st, ierr)
  if (r /= modulo(rank - 1, np) .or. st(MPI_SOURCE) /= r) error stop 1
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Irecv(r, 1, MPI_INTEGER, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, modulo(rank + 1, np), 2, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  if (idx /= 2 .or. reqs(2) /= MPI_REQUEST_NULL) error stop 2
  pr = [real(abs(rank - 1)), real(rank)]
  call MPI_Allreduce(pr, prs, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  if (prs(1) /= 0.0 .or. prs(2) /= real(min(1, np - 1))) error stop 3
  ip = [rank, rank]
  call MPI_Allreduce(ip, ips, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  if (ips(1) /= np - 1 .or. ips(2) /= np - 1) error stop 4
  s = rank
  call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (s /= np - 1) error stop 5
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'color  ', 'blue   ', ierr)
  call MPI_Info_get(info, 'color', 40, value, flag, ierr)
  if (.not. flag .or. value /= 'blue' .or. value(5:5) /= ' ') error stop 6
  call MPI_Info_free(info, ierr)
  if (rank == 0) print '(a,i0)', 'use mpi ok ', np
  call MPI_Finalize(ierr)
end program
