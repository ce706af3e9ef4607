set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output '/work/main/docs/bench/allreduce1000.png'
set grid
set key top left
set title 'seed 002 Allreduce (1000 calls, checked)'
set xlabel 'ranks (2 cores)'
set ylabel 'us per call'
set datafile missing '?'
set logscale x 2
set logscale y
plot 'allreduce1000.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'allreduce1000.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'allreduce1000.dat' using 1:4 with linespoints lw 2 title 'MPICH'
