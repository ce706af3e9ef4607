set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output '/work/main/docs/bench/ring.png'
set grid
set key top left
set title 'ring hop time (2 cores)'
set xlabel 'ranks'
set ylabel 'us per hop'
set datafile missing '?'
set logscale x 2
set logscale y
plot 'ring.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'ring.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'ring.dat' using 1:4 with linespoints lw 2 title 'MPICH'
