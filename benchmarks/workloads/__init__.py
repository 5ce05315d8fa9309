"""The workloads, one module per workload family, collected in report order."""

from benchmarks.workloads.w1_elementwise import W1, W1a
from benchmarks.workloads.w2_elementwise_grad import W2
from benchmarks.workloads.w3_softmax_xent import W3
from benchmarks.workloads.w4_mlp import W4
from benchmarks.workloads.w5_while_loop import W5
from benchmarks.workloads.w6_horner import W6
from benchmarks.workloads.w7_logsumexp import W7, W7f

WORKLOADS = (W1, W1a, W2, W3, W4, W5, W6, W7, W7f)

__all__ = ["WORKLOADS", "W1", "W1a", "W2", "W3", "W4", "W5", "W6", "W7", "W7f"]
