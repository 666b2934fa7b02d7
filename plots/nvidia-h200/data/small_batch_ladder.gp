# underfed plot data: load before plots/ladder.gp
source = 'small_batch.csv'
out = 'small_batch_ladder'
ttl = 'small_batch on NVIDIA H200: utilization ladder at the default point'
names = 'micro1 accumulate large_micro one_block latency_bound wave'
n = 6
data = 'data/small_batch_ladder.dat'
counts = '6 6 6 6 6 6'
