# underfed plot data: load before plots/checkpoint_recompute.gp
source = 'checkpoint_recompute.csv'
out = 'checkpoint_recompute'
gpu = 'NVIDIA H200'
mem = 'act_peak_bytes'
npol = 3
nek = 3
pol = 'data/checkpoint_recompute_pareto_policies.dat'
ek = 'data/checkpoint_recompute_pareto_every_k.dat'
front = 'data/checkpoint_recompute_pareto_front.dat'
