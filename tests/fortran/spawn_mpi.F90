! MPI_Comm_spawn and MPI_Comm_spawn_multiple through mpif.h, or with -DTMPI_USE_MODULE through
! module mpi (fortran_more.bats): the same checks as spawn_f08.f90 with INTEGER handles.
! Prints "spawn mpif ok N" (or "spawn use mpi ok N") on rank 0 of N parents.
program spawn_mpi
#ifdef TMPI_USE_MODULE
  use mpi
#endif
  implicit none
#ifndef TMPI_USE_MODULE
  include 'mpif.h'
#endif
  integer :: parent, ierr
  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  if (parent == MPI_COMM_NULL) then
    call parent_run()
  else
    call child_run(parent)
  end if
  call MPI_Finalize(ierr)
contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(a)', 'FAIL: ' // what
    call MPI_Abort(MPI_COMM_WORLD, 3, e)
  end subroutine

  subroutine child_run(parent)
    integer, intent(inout) :: parent
    character(len=64) :: a1, a2, a3
    integer :: nargs, rank, v, answer, e
    integer :: st(MPI_STATUS_SIZE)
    integer(kind=MPI_ADDRESS_KIND) :: appnum
    logical :: ok, flag
    nargs = command_argument_count()
    a1 = ''
    a2 = ''
    a3 = ''
    if (nargs >= 1) call get_command_argument(1, a1)
    if (nargs >= 2) call get_command_argument(2, a2)
    if (nargs >= 3) call get_command_argument(3, a3)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, e)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag, e)
    ok = flag
    if (nargs == 0) then
      ok = ok .and. appnum == 0
    else if (a1 == 'child') then
      ok = ok .and. nargs == 2 .and. a2 == 'two words' .and. appnum == 0
    else if (a1 == 'multi') then
      ok = ok .and. ((appnum == 0 .and. nargs == 2 .and. a2 == '0') .or. &
                     (appnum == 1 .and. nargs == 3 .and. a2 == '1' .and. a3 == 'extra arg'))
    else
      ok = .false.
    end if
    ! unit 6 of a spawned rank is its own (its libgfortran copy initialised)
    print '(a,i0,a,i0,5a)', 'child ', rank, ': nargs ', nargs, ' args [', &
      trim(a1), '] [', trim(a2), ']'
    call MPI_Recv(v, 1, MPI_INTEGER, 0, 7, parent, st, e)
    answer = -1
    if (ok) answer = v * 100 + rank
    call MPI_Send(answer, 1, MPI_INTEGER, 0, 8, parent, e)
    call MPI_Comm_disconnect(parent, e)
  end subroutine

  subroutine exchange(kids, n, what)
    integer, intent(inout) :: kids
    integer, intent(in) :: n
    character(len=*), intent(in) :: what
    integer :: i, rank, rsize, answer, e
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, e)
    call MPI_Comm_remote_size(kids, rsize, e)
    if (rsize /= n) call fail(what // ': wrong number of children')
    if (rank == 0) then
      do i = 0, n - 1
        call MPI_Send(5 + i, 1, MPI_INTEGER, i, 7, kids, e)
        call MPI_Recv(answer, 1, MPI_INTEGER, i, 8, kids, MPI_STATUS_IGNORE, e)
        if (answer /= (5 + i) * 100 + i) call fail(what // ': a child saw wrong arguments')
      end do
    end if
    call MPI_Comm_disconnect(kids, e)
  end subroutine

  subroutine parent_run()
    character(len=256) :: self
    character(len=300) :: cmds(2)
    character(len=16) :: args(3), argvs(2, 4)
    integer :: rank, size, errs(3), e, maxp(2), infos(2), kids
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, e)
    call MPI_Comm_size(MPI_COMM_WORLD, size, e)
    call get_command_argument(0, self)

    args(1) = 'child'
    args(2) = 'two words'
    args(3) = ' '
    errs = -7
    call MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, kids, errs, e)
    if (e /= MPI_SUCCESS) call fail('MPI_Comm_spawn')
    if (rank == 0 .and. any(errs(1:2) /= MPI_SUCCESS)) call fail('spawn: errcodes not set')
    if (errs(3) /= -7) call fail('spawn: errcodes past maxprocs written')
    call exchange(kids, 2, 'spawn')

    call MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, kids, &
                        MPI_ERRCODES_IGNORE, e)
    if (e /= MPI_SUCCESS) call fail('MPI_Comm_spawn MPI_ARGV_NULL')
    call exchange(kids, 1, 'spawn MPI_ARGV_NULL')

    cmds(1) = self
    cmds(2) = self
    argvs = ' '
    argvs(1, 1) = 'multi'
    argvs(1, 2) = '0'
    argvs(2, 1) = 'multi'
    argvs(2, 2) = '1'
    argvs(2, 3) = 'extra arg'
    maxp(1) = 1
    maxp(2) = 2
    infos = MPI_INFO_NULL
    call MPI_Comm_spawn_multiple(2, cmds, argvs, maxp, infos, 0, MPI_COMM_WORLD, kids, &
                                 MPI_ERRCODES_IGNORE, e)
    if (e /= MPI_SUCCESS) call fail('MPI_Comm_spawn_multiple')
    call exchange(kids, 3, 'spawn_multiple')

    errs = -7
    call MPI_Comm_spawn_multiple(1, cmds, MPI_ARGVS_NULL, maxp, infos, 0, MPI_COMM_WORLD, kids, &
                                 errs, e)
    if (e /= MPI_SUCCESS) call fail('MPI_Comm_spawn_multiple MPI_ARGVS_NULL')
    if (rank == 0 .and. errs(1) /= MPI_SUCCESS) call fail('spawn_multiple: errcodes not set')
    if (errs(2) /= -7) call fail('spawn_multiple: errcodes past the sum of maxprocs written')
    call exchange(kids, 1, 'spawn_multiple MPI_ARGVS_NULL')
#ifdef TMPI_USE_MODULE
    if (rank == 0) print '(a,i0)', 'spawn use mpi ok ', size
#else
    if (rank == 0) print '(a,i0)', 'spawn mpif ok ', size
#endif
  end subroutine
end program
