# underfed plot data: load before plots/sweep.gp
source = 'allreduce_overlap.csv'
out = 'allreduce_overlap_sweep_sm_margin'
ttl = 'allreduce_overlap on NVIDIA H200: sweep of sm_margin (other axes at their defaults)'
xname = 'sm_margin'
logx = 0
names = 'sequential bucketed'
n = 2
data = 'data/allreduce_overlap_sweep_sm_margin.dat'
counts = '6 6'
