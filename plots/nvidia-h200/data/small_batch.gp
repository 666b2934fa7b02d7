# underfed plot data: load before plots/small_batch.gp
source = 'small_batch.csv'
out = 'small_batch'
gpu = 'NVIDIA H200'
copy = 4199.094562
gemm = 799.9659721
micro = 'data/small_batch_micro1.dat'
roof = 'data/small_batch_roof.dat'
flop_per_byte_per_token = 0.9996751776
ridge = 203.7353375
counts = '19 19 19 19 19 19'
wave = 'data/small_batch_wave.dat'
nwave = 19
large = 'data/small_batch_large.dat'
nlarge = 1
