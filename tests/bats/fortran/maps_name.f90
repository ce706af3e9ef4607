! maps_name.f90: the rank's mappings of its private libgfortran copy carry the library's name
! (agent/host/image_private.c), so tools that name a module by its mapping (TSan, perf) say
! which library a frame is in.  Prints how many such mappings it sees.
program maps_name
  implicit none
  character(len=1024) :: line
  integer :: u, ios, n
  n = 0
  open (newunit=u, file='/proc/self/maps', action='read', status='old')
  do
    read (u, '(a)', iostat=ios) line
    if (ios /= 0) exit
    if (index(line, 'memfd:') > 0 .and. index(line, '-libgfortran.so.5') > 0) n = n + 1
  end do
  close (u)
  print '(a, l1)', 'named copy mapped: ', n > 0
end program
