set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output '/work/main/docs/bench/net_pingpong_latency.png'
set grid
set key top left
set title 'pingpong latency (2 nodes)'
set xlabel 'message size (bytes)'
set ylabel 'us'
set datafile missing '?'
set logscale x 2
set logscale y
plot 'net_pingpong_latency.dat' using 1:2 with linespoints lw 2 title 'TMPI', 'net_pingpong_latency.dat' using 1:3 with linespoints lw 2 title 'Open MPI', 'net_pingpong_latency.dat' using 1:4 with linespoints lw 2 title 'MPICH'
