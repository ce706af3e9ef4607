! app_args: one program of an MPMD job (fortran_runtime.bats): prints its command line through
! unit 6, so the second program's libgfortran copy must be initialised and its own.
program app_args
  implicit none
  character(len=32) :: a
  integer :: i, n
  n = command_argument_count()
  do i = 1, n
    call get_command_argument(i, a)
    print '(a,i0,a,i0,2a)', 'args ', n, ' arg ', i, ' ', trim(a)
  end do
end program
