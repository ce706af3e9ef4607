! fhello.f90 — a use-mpi program CMake builds: every rank adds its number with MPI_Allreduce,
! rank 0 prints OK when the sum is right.
program fhello
  use mpi
  implicit none
  integer :: ierr, me, n, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call MPI_Allreduce(me, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) then
    if (total == n * (n - 1) / 2) then
      print '(a)', 'OK'
    else
      print '(a,i0)', 'FAIL sum ', total
    end if
  end if
  call MPI_Finalize(ierr)
end program fhello
