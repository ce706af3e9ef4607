set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output '/work/main/docs/bench/launch.png'
set grid
set key top left
set title 'hello job wall time'
set xlabel 'ranks'
set ylabel 'seconds'
set datafile missing '?'
set logscale x 2
set logscale y
plot 'launch.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'launch.dat' using 1:3 with linespoints lw 2 title 'TMPI (private agent)', 'launch.dat' using 1:4 with linespoints lw 2 title 'Open MPI', 'launch.dat' using 1:5 with linespoints lw 2 title 'MPICH'
