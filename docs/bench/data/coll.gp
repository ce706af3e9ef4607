set terminal pngcairo size 1100,800 font 'DejaVu Sans,10'
set output '/work/main/docs/bench/coll.png'
set multiplot layout 2,2
set grid
set datafile missing '?'
set logscale y
set logscale x 2
set key top left
set title 'Barrier'
set xlabel 'ranks (2 cores)'
set ylabel 'us per call'
plot 'coll_barrier_none.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'coll_barrier_none.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'coll_barrier_none.dat' using 1:4 with linespoints lw 2 title 'MPICH'
set title 'Bcast 8 B, rotating root'
set xlabel 'ranks (2 cores)'
set ylabel 'us per call'
plot 'coll_bcast_rotate.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'coll_bcast_rotate.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'coll_bcast_rotate.dat' using 1:4 with linespoints lw 2 title 'MPICH'
set title 'Reduce 8 B, rotating root'
set xlabel 'ranks (2 cores)'
set ylabel 'us per call'
plot 'coll_reduce_rotate.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'coll_reduce_rotate.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'coll_reduce_rotate.dat' using 1:4 with linespoints lw 2 title 'MPICH'
set title 'Allreduce 8 B'
set xlabel 'ranks (2 cores)'
set ylabel 'us per call'
plot 'coll_allreduce_none.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'coll_allreduce_none.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'coll_allreduce_none.dat' using 1:4 with linespoints lw 2 title 'MPICH'
unset multiplot
