# underfed plot data: load before plots/ladder.gp
source = 'varlen_attention.csv'
out = 'varlen_attention_ladder'
ttl = 'varlen_attention on NVIDIA H200: utilization ladder at the default point'
names = 'pad_global pad_batch bucketed varlen'
n = 4
data = 'data/varlen_attention_ladder.dat'
counts = '4 4 4 4 4 4'
