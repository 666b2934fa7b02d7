# underfed plot data: load before plots/allreduce_overlap.gp
source = 'allreduce_overlap.csv'
out = 'allreduce_overlap'
gpu = 'NVIDIA H200'
buck = 'data/allreduce_overlap_buckets.dat'
nstep = 5
nexp = 5
seq_step = 8.5524
seq_exp = 3.27496
compute = 5.91621
comm = 3.27274
