! omp_sum.f90 — Fortran with OpenMP in a rank: a parallel reduction over the rank's own array
! with several threads, each rank's sum its own.
program omp_sum
  use omp_lib
  implicit none
  integer, parameter :: n = 100000
  integer :: me, i, nthreads
  character(len=16) :: env
  real(8), allocatable :: x(:)
  real(8) :: s
  call get_environment_variable('PMI_RANK', env)
  read (env, *) me
  allocate (x(n))
  x = real(me + 1, 8)
  s = 0
  nthreads = 0
  !$omp parallel do reduction(+:s) reduction(max:nthreads)
  do i = 1, n
    s = s + x(i)
    nthreads = max(nthreads, omp_get_num_threads())
  end do
  !$omp end parallel do
  if (abs(s - real(n, 8) * (me + 1)) > 0.5d0 .or. nthreads < 2) then
    print '(a,i0,a,f0.1,a,i0)', 'rank ', me, ': FAIL sum ', s, ' threads ', nthreads
  else
    print '(a,i0,a)', 'rank ', me, ': OK'
  end if
end program omp_sum
