# underfed plot data: load before plots/sweep.gp
source = 'allreduce_overlap.csv'
out = 'allreduce_overlap_sweep_comm_ctas'
ttl = 'allreduce_overlap on NVIDIA H200: sweep of comm_ctas (other axes at their defaults)'
xname = 'comm_ctas'
logx = 0
names = 'sequential bucketed'
n = 2
data = 'data/allreduce_overlap_sweep_comm_ctas.dat'
counts = '8 8'
