! stop_code.f90 — STOP n and ERROR STOP n end the rank that runs them with status n, as exit()
! does: argv[1] is the rank that stops, argv[2] the kind (stop, error, plain), argv[3] the code.
program stop_code
  implicit none
  character(len=16) :: env, arg
  integer :: me, who, code
  call get_environment_variable('PMI_RANK', env)
  read (env, *) me
  call get_command_argument(1, arg)
  read (arg, *) who
  call get_command_argument(3, env)
  read (env, *) code
  call get_command_argument(2, arg)
  print '(a,i0)', 'before stop on rank ', me
  if (me == who) then
    if (arg == 'error') error stop code
    if (arg == 'plain') stop
    stop code
  end if
  print '(a,i0)', 'after stop on rank ', me
end program stop_code
