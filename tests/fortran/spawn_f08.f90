! MPI_Comm_spawn and MPI_Comm_spawn_multiple through mpi_f08 (fortran_more.bats): the parent
! spawns copies of this program, which see their parent (MPI_Comm_get_parent), their
! arguments (GET_COMMAND_ARGUMENT: argv ended by a blank string, one row of spawn_multiple's
! array_of_argv(count, *) each), MPI_APPNUM, and answer over the inter-communicator.
! Prints "spawn f08 ok N" on rank 0 of N parents; a child that fails answers -1.
program spawn_f08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: parent
  call MPI_Init()
  call MPI_Comm_get_parent(parent)
  if (parent == MPI_COMM_NULL) then
    call parent_run()
  else
    call child_run(parent)
  end if
  call MPI_Finalize()
contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a)', 'FAIL: ' // what
    call MPI_Abort(MPI_COMM_WORLD, 3)
  end subroutine

  ! A child: checks its arguments (its mode is the first), gets a value from parent rank 0
  ! and answers value * 100 + its rank, or -1 when a check failed.
  subroutine child_run(parent)
    type(MPI_Comm), intent(inout) :: parent
    character(len=64) :: a1, a2, a3
    integer :: nargs, rank, v, answer, rsize
    integer(kind=MPI_ADDRESS_KIND) :: appnum
    logical :: ok, flag, inter
    nargs = command_argument_count()
    a1 = ''
    a2 = ''
    a3 = ''
    if (nargs >= 1) call get_command_argument(1, a1)
    if (nargs >= 2) call get_command_argument(2, a2)
    if (nargs >= 3) call get_command_argument(3, a3)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_test_inter(parent, inter)
    call MPI_Comm_remote_size(parent, rsize)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag)
    ok = inter .and. rsize >= 1 .and. flag
    if (nargs == 0) then
      ok = ok .and. appnum == 0                      ! MPI_ARGV_NULL / MPI_ARGVS_NULL
    else if (a1 == 'child') then
      ! 'two words' is one argument; the trailing blanks of the CHARACTER are not
      ok = ok .and. nargs == 2 .and. a2 == 'two words' .and. len_trim(a2) == 9 .and. appnum == 0
    else if (a1 == 'multi') then
      ! row appnum + 1 of array_of_argv: 'multi', the appnum, and for row 2 one more
      ok = ok .and. ((appnum == 0 .and. nargs == 2 .and. a2 == '0') .or. &
                     (appnum == 1 .and. nargs == 3 .and. a2 == '1' .and. a3 == 'extra arg'))
    else
      ok = .false.
    end if
    ! unit 6 of a spawned rank is its own (its libgfortran copy initialised)
    print '(a,i0,a,i0,a,i0,5a)', 'child ', rank, ': nargs ', nargs, ' appnum ', &
      appnum, ' args [', trim(a1), '] [', trim(a2), ']'
    call MPI_Recv(v, 1, MPI_INTEGER, 0, 7, parent, MPI_STATUS_IGNORE)
    answer = -1
    if (ok) answer = v * 100 + rank
    call MPI_Send(answer, 1, MPI_INTEGER, 0, 8, parent)
    call MPI_Comm_disconnect(parent)
  end subroutine

  ! Parent rank 0 sends 5 + i to child i and expects (5 + i) * 100 + i back.
  subroutine exchange(kids, n, what)
    type(MPI_Comm), intent(inout) :: kids
    integer, intent(in) :: n
    character(len=*), intent(in) :: what
    integer :: i, rank, rsize, answer
    logical :: inter
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_test_inter(kids, inter)
    call MPI_Comm_remote_size(kids, rsize)
    if (.not. inter .or. rsize /= n) call fail(what // ': not an inter-communicator to the children')
    if (rank == 0) then
      do i = 0, n - 1
        call MPI_Send(5 + i, 1, MPI_INTEGER, i, 7, kids)
        call MPI_Recv(answer, 1, MPI_INTEGER, i, 8, kids, MPI_STATUS_IGNORE)
        if (answer /= (5 + i) * 100 + i) call fail(what // ': a child saw wrong arguments')
      end do
    end if
    call MPI_Comm_disconnect(kids)
  end subroutine

  subroutine parent_run()
    character(len=256) :: self
    character(len=300) :: cmds(2)
    character(len=16) :: args(3), argvs(2, 4)
    integer :: rank, size, errs(3), ierr, maxp(2), cls
    type(MPI_Comm) :: kids
    type(MPI_Info) :: infos(2)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, size)
    call get_command_argument(0, self)

    ! argv ended by a blank string; the command's leading blanks are dropped
    args(1) = 'child'
    args(2) = 'two words'
    args(3) = ' '
    errs = -7
    call MPI_Comm_spawn('  ' // trim(self), args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, kids, &
                        errs, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_spawn')
    if (rank == 0 .and. any(errs(1:2) /= MPI_SUCCESS)) call fail('spawn: errcodes not set')
    if (errs(3) /= -7) call fail('spawn: errcodes past maxprocs written')
    call exchange(kids, 2, 'spawn')

    ! MPI_ARGV_NULL and MPI_ERRCODES_IGNORE, ierror left out
    call MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, kids, &
                        MPI_ERRCODES_IGNORE)
    call exchange(kids, 1, 'spawn MPI_ARGV_NULL')

    ! spawn_multiple: row i of array_of_argv(2, *) is command i's argv, ended by a blank
    cmds(1) = self
    cmds(2) = self
    argvs = ' '
    argvs(1, 1) = 'multi'
    argvs(1, 2) = '0'
    argvs(2, 1) = 'multi'
    argvs(2, 2) = '1'
    argvs(2, 3) = 'extra arg'
    maxp = [1, 2]
    infos = MPI_INFO_NULL
    errs = -7
    call MPI_Comm_spawn_multiple(2, cmds, argvs, maxp, infos, 0, MPI_COMM_WORLD, kids, errs, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_spawn_multiple')
    if (rank == 0 .and. any(errs /= MPI_SUCCESS)) call fail('spawn_multiple: errcodes not set')
    call exchange(kids, 3, 'spawn_multiple')

    call MPI_Comm_spawn_multiple(1, cmds, MPI_ARGVS_NULL, maxp, infos, 0, MPI_COMM_WORLD, kids, &
                                 MPI_ERRCODES_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_spawn_multiple MPI_ARGVS_NULL')
    call exchange(kids, 1, 'spawn_multiple MPI_ARGVS_NULL')

    ! a program that does not exist: MPI_ERR_SPAWN, and in every errcode at the root
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    errs = -7
    call MPI_Comm_spawn('./no-such-program', MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, &
                        MPI_COMM_WORLD, kids, errs, ierr)
    call MPI_Error_class(ierr, cls)
    if (cls /= MPI_ERR_SPAWN) call fail('a missing program: not MPI_ERR_SPAWN')
    if (kids /= MPI_COMM_NULL) call fail('a failed spawn: intercomm not MPI_COMM_NULL')
    if (rank == 0 .and. any(errs(1:2) /= cls)) call fail('a failed spawn: errcodes')
    if (rank == 0) print '(a,i0)', 'spawn f08 ok ', size
  end subroutine
end program
