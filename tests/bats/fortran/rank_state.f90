! rank_state.f90 — the Fortran runtime's process state is each rank's own: COMMON blocks,
! module variables and SAVE'd locals, I/O units (unit 10 on a file per rank), unit 6's order,
! unit 5 (rank 0 reads stdin, the others see its end), the command line and environment, and
! RANDOM_SEED/RANDOM_NUMBER.  Runs without MPI (every program tmpi-launch runs is ranks): the
! rank comes from PMI_RANK.  Prints "rank R: FAIL what" for a failure, "rank R: OK" at the end.
module rank_mod
  implicit none
  integer :: mod_value = -1
end module rank_mod

program rank_state
  use rank_mod
  implicit none
  integer :: me, blk_value, i, ios, nfail, u
  common /blk/ blk_value
  character(len=64) :: arg, env, line, fname
  integer, allocatable :: seed(:)
  real(8) :: a(2000), b(2000)
  integer :: n

  nfail = 0
  call get_environment_variable('PMI_RANK', env, status=ios)
  if (ios /= 0) call fail('PMI_RANK')
  read (env, *) me
  blk_value = 100 + me
  mod_value = 200 + me
  call saved(me)

  ! the command line is the rank's: argv[1] is its rank number plus the text given
  if (command_argument_count() /= 2) call fail('command_argument_count')
  call get_command_argument(1, arg)
  if (trim(arg) /= 'first') call fail('get_command_argument 1')
  call get_command_argument(2, arg)
  if (trim(arg) /= 'second arg') call fail('get_command_argument 2')

  ! unit 10 on a file of the rank's own, written, then read back after the others wrote
  write (fname, '(a,i0)') 'unit10.', me
  open (10, file=fname, status='replace', action='readwrite')
  do i = 1, 50
    write (10, '(i0)') me * 1000 + i
  end do
  call spin()
  rewind (10)
  do i = 1, 50
    read (10, *, iostat=ios) n
    if (ios /= 0 .or. n /= me * 1000 + i) call fail('unit 10')
  end do
  close (10, status='delete')
  ! a unit NEWUNIT chose is the rank's too
  open (newunit=u, status='scratch')
  write (u, *) me
  rewind (u)
  read (u, *) n
  if (n /= me) call fail('newunit')
  close (u)

  ! unit 5: rank 0 reads the launcher's stdin, every other rank its end
  read (5, '(a)', iostat=ios) line
  if (me == 0 .and. (ios /= 0 .or. trim(line) /= 'input line')) call fail('unit 5 on rank 0')
  if (me /= 0 .and. ios >= 0) call fail('unit 5 not at its end')

  ! RANDOM_SEED: the same seed gives the same numbers while the other ranks draw theirs
  call random_seed(size=n)
  allocate (seed(n))
  seed = 7 + me
  call random_seed(put=seed)
  do i = 1, size(a)
    call random_number(a(i))
    if (mod(i, 100) == 0) call spin()
  end do
  call random_seed(put=seed)
  call random_number(b)
  if (any(a /= b)) call fail('random_seed')
  seed = 0
  call random_seed(get=seed)

  ! unit 6 in order: numbered lines the test checks per rank
  do i = 1, 200
    write (6, '(a,i0,a,i0)') 'line ', i, ' of rank ', me
  end do

  call spin()
  if (blk_value /= 100 + me) call fail('common block')
  if (mod_value /= 200 + me) call fail('module variable')
  call saved(-1)
  if (nfail == 0) print '(a,i0,a)', 'rank ', me, ': OK'

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', me, ': FAIL ', what
    nfail = nfail + 1
  end subroutine fail

  ! keeps its value between calls: set once, checked at the end
  subroutine saved(v)
    integer, intent(in) :: v
    integer, save :: kept = -1
    if (v >= 0) then
      kept = 300 + v
    else if (kept /= 300 + me) then
      call fail('SAVE variable')
    end if
  end subroutine saved

  ! lets the other ranks run (their writes land in between)
  subroutine spin()
    integer :: k
    real(8), volatile :: x
    x = 0
    do k = 1, 200000
      x = x + sqrt(real(k, 8))
    end do
  end subroutine spin
end program rank_state
