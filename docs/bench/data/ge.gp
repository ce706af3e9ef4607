set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output '/work/main/docs/bench/ge.png'
set grid
set key top left
set title 'Gaussian elimination (Bcast of every pivot row, rotating root), N=512'
set xlabel 'ranks (2 cores)'
set ylabel 'MFLOP/s'
set datafile missing '?'
set logscale x 2
set yrange [0:*]
plot 'ge.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'ge.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'ge.dat' using 1:4 with linespoints lw 2 title 'MPICH'
