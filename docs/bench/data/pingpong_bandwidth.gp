set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output '/work/main/docs/bench/pingpong_bandwidth.png'
set grid
set key top left
set title 'pingpong bandwidth'
set xlabel 'message size (bytes)'
set ylabel 'MB/s'
set datafile missing '?'
set logscale x 2
plot 'pingpong_bandwidth.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'pingpong_bandwidth.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'pingpong_bandwidth.dat' using 1:4 with linespoints lw 2 title 'MPICH'
