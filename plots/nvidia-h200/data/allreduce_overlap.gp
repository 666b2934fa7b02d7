# underfed plot data: load before plots/allreduce_overlap.gp
source = 'allreduce_overlap.csv'
out = 'allreduce_overlap'
gpu = 'NVIDIA H200'
buck = 'data/allreduce_overlap_buckets.dat'
nstep = 5
nexp = 5
seq_step = 8.58757
seq_exp = 3.26288
compute = 5.75218
comm = 3.25653
