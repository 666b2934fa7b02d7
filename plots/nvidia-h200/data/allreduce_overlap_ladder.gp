# underfed plot data: load before plots/ladder.gp
source = 'allreduce_overlap.csv'
out = 'allreduce_overlap_ladder'
ttl = 'allreduce_overlap on NVIDIA H200: utilization ladder at the default point'
names = 'sequential bucketed'
n = 2
data = 'data/allreduce_overlap_ladder.dat'
counts = '2 2 2 2 2 2'
