# underfed plot data: load before plots/sweep.gp
source = 'allreduce_overlap.csv'
out = 'allreduce_overlap_sweep_bucket_mib'
ttl = 'allreduce_overlap on NVIDIA H200: sweep of bucket_mib (other axes at their defaults)'
xname = 'bucket_mib'
logx = 1
names = 'sequential bucketed'
n = 2
data = 'data/allreduce_overlap_sweep_bucket_mib.dat'
counts = '10 10'
