#!/usr/bin/env python3
# Writes traces/samples/tiny-2rank/rank-{0,1}.trace.json: a small synthetic 2-rank
# data-parallel (DDP) training loop in the Kineto JSON format torch.profiler writes.
#
# Deterministic: fixed seed, no wall clock, stdlib only. Run from anywhere:
#     python3 traces/samples/make-sample.py
# It checks the events it made (one launch per GPU task, no overlap on a stream, steps
# contain their launches, proper nesting on each thread) and prints the step times they
# imply under DESIGN.md's definition.
#
# The model: a one-block transformer (hidden 1024, FFN 4096, vocab 8192, batch 8 x 512
# tokens, fp32 with TF32 GEMMs) on one H100 per rank. Per step: a data-loader wait, an H2D
# copy on side stream 13 that compute stream 7 waits for, a forward of 12 ops on the main
# thread, the backward on the autograd thread with two DDP bucket all-reduces on NCCL
# stream 20 (each waits for stream 7, and stream 7 waits for the last one before the
# optimizer), an AdamW foreach step, and loss.item() (a DtoH copy and a stream sync).
# Rank 1 runs a little slower and starts later, so rank 0's all-reduce kernels wait longer.
# Times are simulated: a task starts when its processor is free and its inputs are ready,
# and a collective ends at the latest member's start plus its transfer time.

import contextlib
import json
import os
import random
import sys

SEED = 20240917
WORLD = 2
STEPS = (10, 11, 12)
# baseTimeNanoseconds: Kineto floors system_clock to a 7,889,238 s boundary.
BASE_NS = 7889238 * 224 * 1000000000
T0_NS = 5183870312457          # first event, ns after the base (about 60 days)
RANK_START_SKEW_NS = (0, 173418)
CPU_SCALE = (1.0, 1.045)
GPU_SCALE = (1.0, 1.018)
PIDS = (48213, 48214)
AUTOGRAD_TIDS = (48561, 48566)
DEVICE = 0
CONTEXT = 1
S_COMPUTE, S_COPY, S_NCCL = 7, 13, 20
NCCL_ALGBW_BYTES_PER_NS = 175.0     # 175 GB/s for a 2-GPU NVLink ring
NCCL_LATENCY_NS = 14000
PG_ARGS = {
	"Process Group Name": "0", "Process Group Description": "default_pg",
	"Process Group Ranks": "[0, 1]",
}

# Kernel names as CUPTI reports them (demangled).
AN = "at::native::"
ANON = "at::native::(anonymous namespace)::"


def vec_kernel(functor, arrays):
	return ("void %svectorized_elementwise_kernel<4, %s, at::detail::Array<char*, %d> >"
		"(int, %s, at::detail::Array<char*, %d>)" % (AN, functor, arrays, functor, arrays))


def mta_kernel(meta, functor, op):
	tpl = "%sTensorListMetadata<%d>, %s%s, %s" % (ANON, meta, ANON, functor, op)
	return "void %smulti_tensor_apply_kernel<%s>(%s)" % (ANON, tpl, tpl)


def gemm(layout, tile, wg):
	return ("sm90_xmma_gemm_f32f32_tf32f32_f32_%s_n_tilesize%s_warpgroupsize%s"
		"_execute_segment_k_off_kernel__5x_cublas" % (layout, tile, wg))


GELU = ("%sGeluCUDAKernelImpl(at::TensorIteratorBase&, %sGeluType)::{lambda()#2}::"
	"operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}" % (AN, AN))
GELU_BWD = ("%sGeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, %sGeluType)::{lambda()#2}::"
	"operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}"
	% (AN, AN))
SUM_OP = ("%sReduceOp<float, %sfunc_wrapper_t<float, %ssum_functor<float, float, float>::"
	"operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>"
	% (AN, AN, AN))

K = {
	"index_select": "void %sindexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>"
		"(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo"
		"<float const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>"
		", int, int, unsigned int, unsigned int, long)" % ANON,
	"ln": "void %svectorized_layer_norm_kernel<float, float>(int, float, float const*, "
		"float const*, float const*, float*, float*, float*)" % ANON,
	"ln_bwd_in": "void %slayer_norm_grad_input_kernel_vectorized<float, float>(float const*, "
		"float const*, float const*, float const*, float const*, float*, int)" % ANON,
	"ln_bwd_gb": "void %sGammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, "
		"float const*, float const*, float const*, float*, float*)" % ANON,
	"gemm_tn": gemm("tn", "128x128x32", "1x1x1"),
	"gemm_nn": gemm("nn", "128x256x32", "2x1x1"),
	"gemm_nt": gemm("nt", "128x128x32", "1x1x1"),
	"cutlass": "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>"
		"(cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4::Params)",
	"attn": "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel"
		"<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
	"attn_bwd": "fmha_cutlassB_f32_aligned_64x64_k64_sm80(PyTorchMemEffAttention::"
		"AttentionBackwardKernel<cutlass::arch::Sm80, float, true, false, false, 64, 64, 64, "
		"false>::Params)",
	"add": vec_kernel("%sCUDAFunctor_add<float>" % AN, 3),
	"fill": vec_kernel("%sFillFunctor<float>" % AN, 1),
	"gelu": vec_kernel(GELU, 2),
	"gelu_bwd": vec_kernel(GELU_BWD, 3),
	"sum": "void %sreduce_kernel<512, 1, %s>(%s)" % (AN, SUM_OP, SUM_OP),
	"logsoftmax": "void %scunn_SoftMaxForward<4, float, float, float, "
		"%sLogSoftMaxForwardEpilogue>(float*, float const*, int)" % (ANON, ANON),
	"logsoftmax_bwd": "void %scunn_SoftMaxBackward<4, float, float, float, "
		"%sLogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)"
		% (ANON, ANON),
	"nll": "void %snll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, "
		"float*, float const*, long const*, float const*, bool, long, long, long, long)" % ANON,
	"nll_bwd": "void %snll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, "
		"float const*, long const*, float const*, float const*, bool, int, int, long, long)"
		% ANON,
	"emb_bwd": "void %sembedding_backward_feature_kernel<float, float, long>(long const*, "
		"float const*, float*, int, long, int)" % ANON,
	"adam_lerp": mta_kernel(2, "TernaryOpScalarFunctor<float, 2, 2, 0>",
		"%sLerpFunctor<float>, float" % AN),
	"adam_addcmul": mta_kernel(3, "PointwiseOpScalarFunctor<float, 3, 3, 0>",
		"std::multiplies<float>, float"),
	"adam_addcdiv": mta_kernel(4, "PointwiseOpScalarListFunctor<float, 4, 3, 0>",
		"std::divides<float>, float"),
	"allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
}

# (kernel key, µs, grid, block, registers per thread, shared memory)
KSHAPE = {
	"index_select": ((4096, 1, 1), (128, 1, 1), 32, 0),
	"ln": ((4096, 1, 1), (256, 1, 1), 32, 0),
	"ln_bwd_in": ((4096, 1, 1), (256, 1, 1), 40, 0),
	"ln_bwd_gb": ((32, 1, 1), (32, 32, 1), 46, 8192),
	"gemm_tn": ((24, 32, 1), (128, 1, 1), 168, 197632),
	"gemm_nn": ((16, 32, 1), (256, 1, 1), 168, 215040),
	"gemm_nt": ((32, 8, 1), (128, 1, 1), 168, 197632),
	"cutlass": ((8, 32, 1), (256, 1, 1), 238, 98304),
	"attn": ((8, 16, 8), (32, 4, 1), 255, 45056),
	"attn_bwd": ((1, 16, 8), (128, 1, 1), 255, 110592),
	"add": ((4096, 1, 1), (128, 1, 1), 22, 0),
	"fill": ((1024, 1, 1), (128, 1, 1), 16, 0),
	"gelu": ((16384, 1, 1), (128, 1, 1), 24, 0),
	"gelu_bwd": ((16384, 1, 1), (128, 1, 1), 28, 0),
	"sum": ((8, 1, 1), (32, 16, 1), 40, 4096),
	"logsoftmax": ((4096, 1, 1), (1024, 1, 1), 38, 128),
	"logsoftmax_bwd": ((4096, 1, 1), (1024, 1, 1), 36, 128),
	"nll": ((1, 1, 1), (32, 1, 1), 32, 2048),
	"nll_bwd": ((1, 1, 1), (32, 1, 1), 26, 0),
	"emb_bwd": ((4096, 1, 1), (32, 32, 1), 40, 12288),
	"adam_lerp": ((2304, 1, 1), (512, 1, 1), 32, 0),
	"adam_addcmul": ((2304, 1, 1), (512, 1, 1), 38, 0),
	"adam_addcdiv": ((2304, 1, 1), (512, 1, 1), 40, 0),
	"allreduce": ((16, 1, 1), (640, 1, 1), 96, 0),
}

F, L, S = "float", "long int", "Scalar"
X = [8, 512, 1024]
# Forward: (op, child ops, [(kernel, µs)], Input Dims, Input type). "ExC" marks the one
# kernel launched with cudaLaunchKernelExC; "memset" a cudaMemsetAsync.
FORWARD = [
	("aten::embedding", ["aten::index_select"], [("index_select", 24)],
		[[8192, 1024], [8, 512], [], [], []], [F, L, S, S, S]),
	("aten::layer_norm", ["aten::native_layer_norm"], [("ln", 21)],
		[X, [], [1024], [1024], [], []], [F, S, F, F, S, S]),
	("aten::linear", ["aten::addmm"], [("gemm_tn", 236)],
		[X, [3072, 1024], [3072]], [F, F, F]),
	("aten::scaled_dot_product_attention", ["aten::_scaled_dot_product_efficient_attention"],
		[("memset", 3), ("attn", 372)],
		[[8, 16, 512, 64], [8, 16, 512, 64], [8, 16, 512, 64], [], [], [], []],
		[F, F, F, "", S, S, ""]),
	("aten::linear", ["aten::addmm"], [("ExC", 81)], [X, [1024, 1024], [1024]], [F, F, F]),
	("aten::add", [], [("add", 26)], [X, X, []], [F, F, S]),
	("aten::layer_norm", ["aten::native_layer_norm"], [("ln", 21)],
		[X, [], [1024], [1024], [], []], [F, S, F, F, S, S]),
	("aten::linear", ["aten::addmm"], [("gemm_tn", 304)],
		[X, [4096, 1024], [4096]], [F, F, F]),
	("aten::gelu", [], [("gelu", 62)], [[8, 512, 4096], []], [F, ""]),
	("aten::linear", ["aten::addmm"], [("gemm_tn", 309)],
		[[8, 512, 4096], [1024, 4096], [1024]], [F, F, F]),
	("aten::linear", ["aten::matmul", "aten::mm"], [("gemm_tn", 368)],
		[X, [8192, 1024], []], [F, F, ""]),
	("aten::cross_entropy_loss", ["aten::log_softmax", "aten::_log_softmax"],
		[("logsoftmax", 152), ("nll", 11)],
		[[4096, 8192], [4096], [], [], [], []], [F, L, "", S, S, S]),
]

# Backward on the autograd thread: (grad fn, forward index for its Sequence number,
# aten op, [(kernel, µs)], bucket all-reduced after it or None).
BACKWARD = [
	("NllLossBackward0", 11, "aten::nll_loss_backward", [("nll_bwd", 9)], None),
	("LogSoftmaxBackward0", 11, "aten::_log_softmax_backward_data",
		[("logsoftmax_bwd", 158)], None),
	("MmBackward0", 10, "aten::mm", [("gemm_nn", 366), ("gemm_nt", 372)], None),
	("AddmmBackward0", 9, "aten::mm", [("gemm_nn", 306), ("gemm_nt", 312), ("sum", 31)], 0),
	("GeluBackward0", 8, "aten::gelu_backward", [("gelu_bwd", 87)], None),
	("AddmmBackward0", 7, "aten::mm", [("gemm_nn", 301), ("gemm_nt", 318)], None),
	("NativeLayerNormBackward0", 6, "aten::native_layer_norm_backward",
		[("ln_bwd_in", 38), ("ln_bwd_gb", 29)], None),
	("AddmmBackward0", 4, "aten::mm", [("gemm_nn", 83), ("gemm_nt", 86)], None),
	("ScaledDotProductEfficientAttentionBackward0", 3, "aten::_efficient_attention_backward",
		[("memset", 4), ("attn_bwd", 374)], None),
	("AddmmBackward0", 2, "aten::mm", [("gemm_nn", 239), ("gemm_nt", 247)], None),
	("NativeLayerNormBackward0", 1, "aten::native_layer_norm_backward",
		[("ln_bwd_in", 38), ("ln_bwd_gb", 29)], None),
	("EmbeddingBackward0", 0, "aten::embedding_dense_backward",
		[("fill", 29), ("emb_bwd", 47)], 1),
]
# DDP buckets, in floats: lm head + fc2; then everything else.
BUCKET_NELEMS = (12583936, 16789504)

# AdamW (foreach): (op, kernel, µs, number of tensor lists)
OPTIMIZER = [
	("aten::_foreach_lerp_", "adam_lerp", 236, 3),
	("aten::_foreach_addcmul_", "adam_addcmul", 241, 3),
	("aten::_foreach_addcdiv_", "adam_addcdiv", 318, 3),
]


class Rank:
	"""One rank's simulated process: two CPU threads, three streams, its event lists."""

	def __init__(self, rank):
		self.rank = rank
		self.rng = random.Random(SEED * 16 + rank)
		self.pid = PIDS[rank]
		self.main = self.pid
		self.bwd = AUTOGRAD_TIDS[rank]
		self.t = {self.main: T0_NS + RANK_START_SKEW_NS[rank], self.bwd: 0}
		self.free = {S_COMPUTE: 0, S_COPY: 0, S_NCCL: 0}
		self.stack = {self.main: [], self.bwd: []}
		self.corr = 21377
		self.ext = 1311
		self.ev_idx = 0
		self.seq_base = 4105
		self.event_id = 92
		self.coll_seq = 0
		self.cpu = []          # cpu_op and user_annotation, in start order per thread
		self.api = []          # runtime/driver calls and their "s" flows
		self.gpu = []          # kernels, copies, sets, cuda_sync, and their "f" flows

	def ns(self, us, gpu=False):
		scale = (GPU_SCALE if gpu else CPU_SCALE)[self.rank]
		return int(round(us * 1000.0 * scale * self.rng.uniform(0.96, 1.04)))

	def adv(self, tid, us):
		self.t[tid] += self.ns(us)

	@contextlib.contextmanager
	def op(self, tid, name, cat="cpu_op", dims=None, types=None, seq=None, fwd_tid=None,
			pre=1.5, enter=4.0, leave=2.0):
		self.adv(tid, pre)
		start = self.t[tid]
		self.ext += 1
		args = {"External id": self.ext}
		if seq is not None:
			args["Sequence number"] = seq
			args["Fwd thread id"] = fwd_tid
		if dims is not None:
			args["Input Dims"] = dims
			args["Input type"] = types
		args["Ev Idx"] = self.ev_idx
		self.ev_idx += 1
		ev = {"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": tid,
			"ts": start, "dur": 0, "args": args}
		self.cpu.append(ev)
		# Runtime calls carry the innermost cpu_op's id: Kineto correlates user
		# annotations separately (CUSTOM1), so they do not count here.
		stack = self.stack[tid] if cat == "cpu_op" else []
		stack.append(self.ext)
		self.adv(tid, enter)
		yield ev
		self.adv(tid, leave)
		stack.pop()
		ev["dur"] = self.t[tid] - start

	def annot(self, tid, name, **kw):
		return self.op(tid, name, cat="user_annotation", **kw)

	def call(self, tid, name, cbid, us, cat="cuda_runtime", flow=False):
		"""A runtime/driver call at the thread's current time; returns (event, corr)."""
		self.corr += 1 + (self.rng.random() < 0.15)   # filtered calls leave gaps
		ext = self.stack[tid][-1] if self.stack[tid] else self.corr
		ev = {"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": tid,
			"ts": self.t[tid], "dur": self.ns(us),
			"args": {"External id": ext, "cbid": cbid, "correlation": self.corr}}
		self.api.append(ev)
		if flow:
			self.api.append({"ph": "s", "id": self.corr, "pid": self.pid, "tid": tid,
				"ts": ev["ts"], "cat": "ac2g", "name": "ac2g"})
		self.t[tid] += ev["dur"]
		return ev

	def gpu_start(self, call, stream):
		# Back-to-back kernels on a stream still leave about a microsecond between them.
		return max(call["ts"] + self.ns(4.2), self.free[stream] + self.ns(1.1, gpu=True))

	def gpu_task(self, call, cat, name, stream, us, args, start=None, dur_ns=None):
		start = self.gpu_start(call, stream) if start is None else start
		dur = dur_ns if dur_ns is not None else self.ns(us, gpu=True)
		a = {"External id": call["args"]["External id"]}
		if cat == "kernel":
			a["queued"] = 0
		a.update({"device": DEVICE, "context": CONTEXT, "stream": stream,
			"correlation": call["args"]["correlation"]})
		a.update(args)
		ev = {"ph": "X", "cat": cat, "name": name, "pid": DEVICE, "tid": stream,
			"ts": start, "dur": dur, "args": a}
		self.gpu.append(ev)
		self.gpu.append({"ph": "f", "id": call["args"]["correlation"], "pid": DEVICE,
			"tid": stream, "ts": start, "cat": "ac2g", "name": "ac2g", "bp": "e"})
		self.free[stream] = start + dur
		return ev

	def kernel(self, tid, key, us, stream=S_COMPUTE, api="cudaLaunchKernel", cbid=211,
			cat="cuda_runtime", extra=None):
		call = self.call(tid, api, cbid, 4.6 if cbid == 211 else 7.8, cat=cat, flow=True)
		grid, block, regs, smem = KSHAPE[key]
		blocks = grid[0] * grid[1] * grid[2]
		threads = block[0] * block[1] * block[2]
		warps_per_sm = blocks * ((threads + 31) // 32) / 132.0
		args = {"registers per thread": regs, "shared memory": smem,
			"blocks per SM": round(blocks / 132.0, 6),
			"warps per SM": round(warps_per_sm, 6), "grid": list(grid), "block": list(block),
			"est. achieved occupancy %": min(100, int(warps_per_sm / 64.0 * 100))}
		args.update(extra or {})
		ev = self.gpu_task(call, "kernel", K[key], stream, us, args)
		self.adv(tid, 1.2)
		return ev

	def copy(self, tid, api_name, cbid, cat, name, stream, us, nbytes):
		call = self.call(tid, api_name, cbid, 6.5 if cat == "gpu_memcpy" else 4.8, flow=True)
		ev = self.gpu_task(call, cat, name, stream, us, {"bytes": nbytes})
		gbps = nbytes / ev["dur"]
		ev["args"]["memory bandwidth (GB/s)"] = gbps
		self.adv(tid, 1.0)
		return ev

	def event_record(self, tid, stream):
		call = self.call(tid, "cudaEventRecord", 135, 1.7)
		self.event_id += 1 + (self.rng.random() < 0.3)
		self.adv(tid, 0.8)
		return {"corr": call["args"]["correlation"], "id": self.event_id, "stream": stream,
			"ready": self.free[stream]}

	def sync_event(self, call, kind, stream, extra):
		a = {"External id": call["args"]["External id"], "cuda_sync_kind": kind}
		a.update(extra)
		a.update({"stream": stream, "correlation": call["args"]["correlation"],
			"device": DEVICE, "context": CONTEXT})
		ts = call["ts"] + min(400, call["dur"] // 4)
		self.gpu.append({"ph": "X", "cat": "cuda_sync", "name": kind, "pid": DEVICE,
			"tid": stream, "ts": ts, "dur": call["ts"] + call["dur"] - 300 - ts, "args": a})
		self.gpu.append({"ph": "f", "id": call["args"]["correlation"], "pid": DEVICE,
			"tid": stream, "ts": ts, "cat": "ac2g", "name": "ac2g", "bp": "e"})

	def stream_wait(self, tid, stream, rec):
		call = self.call(tid, "cudaStreamWaitEvent", 147, 1.9, flow=True)
		self.sync_event(call, "Stream Wait Event", stream, {
			"wait_on_stream": rec["stream"], "wait_on_cuda_event_record_corr_id": rec["corr"],
			"wait_on_cuda_event_id": rec["id"]})
		self.free[stream] = max(self.free[stream], rec["ready"])
		self.adv(tid, 1.0)

	def stream_sync(self, tid, stream):
		call = self.call(tid, "cudaStreamSynchronize", 131, 2.4, flow=True)
		end = max(call["ts"] + call["dur"], self.free[stream] + self.ns(3.1))
		self.t[tid] = end
		call["dur"] = end - call["ts"]
		self.sync_event(call, "Stream Sync", stream, {})
		self.adv(tid, 1.5)


def forward(r):
	m = r.main
	with r.annot(m, "DistributedDataParallel.forward", enter=22, leave=6):
		for i, (name, children, kernels, dims, types) in enumerate(FORWARD):
			with contextlib.ExitStack() as st:
				st.enter_context(r.op(m, name, dims=dims, types=types, seq=r.seq_base + i,
					fwd_tid=0, pre=9.0, enter=5.0))
				for c in children:
					st.enter_context(r.op(m, c, dims=dims, types=types, pre=1.0, enter=3.5))
				for key, us in kernels:
					if key == "memset":
						with r.op(m, "aten::zeros", dims=[[], [], [], [], []],
								types=["", "", "", "", ""]):
							r.copy(m, "cudaMemsetAsync", 51, "gpu_memset",
								"Memset (Device)", S_COMPUTE, us, 262144)
					elif key == "ExC":
						r.kernel(m, "cutlass", us, api="cudaLaunchKernelExC", cbid=430)
					else:
						r.kernel(m, key, us)


def allreduce(r, tid, bucket):
	"""DDP bucket all-reduce; yields to the driver, which returns the kernel's end."""
	r.coll_seq += 1
	n = BUCKET_NELEMS[bucket]
	coll = {"Collective name": "allreduce", "In msg nelems": n, "Out msg nelems": n,
		"Group size": WORLD, "dtype": "Float", "In split size": "[]", "Out split size": "[]"}
	coll.update(PG_ARGS)
	with r.op(tid, "record_param_comms", pre=6.0, enter=3.0) as ev:
		ev["args"].update({"Process Group Name": "0", "Process Group Description": "default_pg",
			"Process Group Ranks": "[0, 1]", "Rank": r.rank, "Global rank start": 0,
			"Global rank stride": 1, "Collective name": "allreduce", "dtype": "Float",
			"In msg nelems": n, "Out msg nelems": n, "Group size": WORLD,
			"In split size": "[]", "Out split size": "[]", "Seq": r.coll_seq,
			"Is asynchronized op": False})
		rec = r.event_record(tid, S_COMPUTE)
		r.stream_wait(tid, S_NCCL, rec)
		with r.annot(tid, "nccl:all_reduce", pre=6.0, enter=12.0, leave=3.0):
			call = r.call(tid, "cuLaunchKernelEx", 652, 9.4, cat="cuda_driver", flow=True)
			start = r.gpu_start(call, S_NCCL)
			nbytes = 4 * n
			end = yield (r.coll_seq, start, NCCL_LATENCY_NS + nbytes / NCCL_ALGBW_BYTES_PER_NS)
			grid, block, regs, smem = KSHAPE["allreduce"]
			args = {"registers per thread": regs, "shared memory": smem,
				"blocks per SM": round(16 / 132.0, 6), "warps per SM": round(16 * 20 / 132.0, 6),
				"grid": list(grid), "block": list(block), "est. achieved occupancy %": 0}
			args.update(coll)
			r.gpu_task(call, "kernel", K["allreduce"], S_NCCL, 0, args, start=start,
				dur_ns=end - start)
			r.adv(tid, 2.0)
			done = r.event_record(tid, S_NCCL)
	return done


def backward(r):
	b = r.bwd
	r.t[b] = max(r.t[b], r.t[r.main] + r.ns(31))
	pending = []
	for name, fwd, aten, kernels, bucket in BACKWARD:
		with r.op(b, "autograd::engine::evaluate_function: " + name, seq=r.seq_base + fwd,
				fwd_tid=1, pre=7.0):
			with r.op(b, aten, pre=1.5):
				for key, us in kernels:
					if key == "memset":
						r.copy(b, "cudaMemsetAsync", 51, "gpu_memset", "Memset (Device)",
							S_COMPUTE, us, 524288)
					else:
						r.kernel(b, key, us)
		if bucket is not None:
			pending.append((yield from allreduce(r, b, bucket)))
	# Reducer::finalize_backward: work.wait() makes stream 7 wait for the last all-reduce.
	r.adv(b, 18)
	r.stream_wait(b, S_COMPUTE, pending[-1])
	r.t[r.main] = max(r.t[r.main], r.t[b] + r.ns(14))


def optimizer(r):
	m = r.main
	with r.annot(m, "Optimizer.step#AdamW.step", pre=4.0, enter=38.0, leave=9.0):
		for name, key, us, lists in OPTIMIZER:
			dims = [[] for _ in range(lists)] + [[]]
			types = ["TensorList"] * lists + [S]
			with r.op(m, name, dims=dims, types=types, pre=6.0, enter=11.0):
				r.kernel(m, key, us)
	with r.annot(m, "Optimizer.zero_grad#AdamW.zero_grad", pre=3.0, enter=41.0, leave=3.0):
		pass


def program(r):
	m = r.main
	for step in STEPS:
		with r.annot(m, "ProfilerStep#%d" % step, pre=0.0, enter=6.0, leave=3.0):
			with r.annot(m, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
					enter=1290, leave=4.0):
				pass
			with r.op(m, "aten::to", dims=[[8, 513], [], [], [], [], []],
					types=[L, "", "", "", "", ""], pre=3.0):
				with r.op(m, "aten::_to_copy", pre=1.0):
					with r.op(m, "aten::copy_", pre=2.0):
						r.copy(m, "cudaMemcpyAsync", 41, "gpu_memcpy",
							"Memcpy HtoD (Pinned -> Device)", S_COPY, 3.4, 32832)
			r.adv(m, 3.0)
			rec = r.event_record(m, S_COPY)
			r.stream_wait(m, S_COMPUTE, rec)
			forward(r)
			yield from backward(r)
			optimizer(r)
			with r.op(m, "aten::item", dims=[[]], types=[F], pre=5.0):
				with r.op(m, "aten::_local_scalar_dense", dims=[[]], types=[F], pre=1.0):
					r.copy(m, "cudaMemcpyAsync", 41, "gpu_memcpy",
						"Memcpy DtoH (Device -> Pageable)", S_COMPUTE, 1.9, 4)
					r.stream_sync(m, S_COMPUTE)
			r.seq_base += 53
		r.adv(m, 11.0)


def simulate():
	"""Runs both ranks in lock step; a collective ends at the last start + transfer."""
	ranks = [Rank(k) for k in range(WORLD)]
	progs = [program(r) for r in ranks]
	asks = [next(p, None) for p in progs]
	while any(a is not None for a in asks):
		assert all(a is not None for a in asks), "ranks disagree on collectives"
		assert len(set(a[0] for a in asks)) == 1, "collective sequence mismatch"
		last = max(a[1] for a in asks)
		xfer = int(round(max(a[2] for a in asks)))
		ends = [last + xfer + ranks[k].ns(0.6) for k in range(WORLD)]
		asks = []
		for p, end in zip(progs, ends):
			try:
				asks.append(p.send(end))
			except StopIteration:
				asks.append(None)
	return ranks


def metadata(r, t_start):
	def m(name, pid, tid, args):
		return {"name": name, "ph": "M", "ts": t_start, "pid": pid, "tid": tid, "args": args}
	ev = [m("process_name", r.pid, 0, {"name": "python3"}),
		m("process_labels", r.pid, 0, {"labels": "CPU"}),
		m("process_sort_index", r.pid, 0, {"sort_index": r.pid}),
		m("process_name", DEVICE, 0, {"name": "python3"}),
		m("process_labels", DEVICE, 0, {"labels": "GPU %d" % DEVICE}),
		m("process_sort_index", DEVICE, 0, {"sort_index": 5000000 + DEVICE})]
	for s in (S_COMPUTE, S_COPY, S_NCCL):
		ev.append(m("thread_name", DEVICE, s, {"name": "stream %d " % s}))
		ev.append(m("thread_sort_index", DEVICE, s, {"sort_index": s}))
	for tid, tname in ((r.main, "pt_main_thread"), (r.bwd, "pt_autograd_0")):
		ev.append(m("thread_name", r.pid, tid, {"name": "thread %d (%s)" % (tid, tname)}))
		ev.append(m("thread_sort_index", r.pid, tid, {"sort_index": tid}))
	return ev


def events(r):
	"""All of a rank's trace events in the order Kineto writes them."""
	xs = [e for e in r.cpu + r.api + r.gpu if e["ph"] == "X"]
	t_start = min(e["ts"] for e in xs) - 41377
	t_end = max(e["ts"] + e["dur"] for e in xs) + 187211
	# PyTorch hands Kineto its CPU ops per thread, the autograd thread's first here.
	cpu = [e for e in r.cpu if e["tid"] == r.bwd] + [e for e in r.cpu if e["tid"] == r.main]
	tail = [{"ph": "X", "cat": "Trace", "ts": t_start, "dur": t_end - t_start, "pid": "Spans",
			"tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
		{"name": "process_sort_index", "ph": "M", "ts": t_start, "pid": "Spans", "tid": 0,
			"args": {"sort_index": 536870912}},
		{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
			"tid": "Trace PyTorch Profiler", "ts": t_start},
		{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": t_end}]
	return metadata(r, t_start) + cpu + r.api + r.gpu + tail


# ---- checks -------------------------------------------------------------------------

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
API_CATS = ("cuda_runtime", "cuda_driver")


def check(r, evs):
	xs = [e for e in evs if e["ph"] == "X"]
	calls = {}
	for e in xs:
		if e["cat"] in API_CATS:
			c = e["args"]["correlation"]
			assert c not in calls, "correlation %d used twice" % c
			calls[c] = e
	for e in xs:
		assert e["dur"] > 0 and e["ts"] > 0, e
		if e["cat"] in GPU_CATS + ("cuda_sync",):
			call = calls[e["args"]["correlation"]]
			assert call["args"]["External id"] == e["args"]["External id"]
		if e["cat"] in GPU_CATS:
			assert e["ts"] > call["ts"], "GPU task before its launch"
	gpu = [e for e in xs if e["cat"] in GPU_CATS]
	assert len({e["args"]["correlation"] for e in gpu}) == len(gpu), "two tasks, one launch"
	for s in (S_COMPUTE, S_COPY, S_NCCL):
		tasks = sorted((e for e in gpu if e["tid"] == s), key=lambda e: e["ts"])
		for a, b in zip(tasks, tasks[1:]):
			assert a["ts"] + a["dur"] <= b["ts"], "overlap on stream %d" % s
	flows = {}
	for e in evs:
		if e["ph"] in "sf" and e.get("cat") == "ac2g":
			flows.setdefault(e["id"], []).append(e["ph"])
	for c, phs in flows.items():
		assert sorted(phs) == ["f", "s"], "flow %d: %s" % (c, phs)
	records = {c for c, e in calls.items() if e["name"] == "cudaEventRecord"}
	for e in xs:
		if e["cat"] == "cuda_sync" and e["name"] == "Stream Wait Event":
			assert e["args"]["wait_on_cuda_event_record_corr_id"] in records
	for tid in (r.main, r.bwd):
		check_nesting([e for e in xs if e["pid"] == r.pid and e["tid"] == tid])
	steps = [e for e in xs if e["name"].startswith("ProfilerStep#")]
	for e in xs:
		if e["cat"] in API_CATS:
			assert any(s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"]
				for s in steps), "call outside every step"


def check_nesting(xs):
	stack = []
	for e in sorted(xs, key=lambda e: (e["ts"], -e["dur"])):
		while stack and stack[-1] <= e["ts"]:
			stack.pop()
		end = e["ts"] + e["dur"]
		assert not stack or end <= stack[-1], "partial overlap on a thread: %s" % e["name"]
		stack.append(end)


# ---- step times (DESIGN.md, "Definitions used in every report") ----------------------

def step_times(evs):
	"""{step number: (start ns, end ns)} from one rank's events."""
	xs = [e for e in evs if e["ph"] == "X"]
	steps = sorted((e for e in xs if e["cat"] == "user_annotation"
		and e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
	calls = {e["args"]["correlation"]: e for e in xs if e["cat"] in API_CATS}
	gpu = [e for e in xs if e["cat"] in GPU_CATS]
	out = {}
	for i, s in enumerate(steps):
		n = int(s["name"].split("#")[1])
		if i + 1 < len(steps):
			out[n] = (s["ts"], steps[i + 1]["ts"])
			continue
		end = s["ts"] + s["dur"]
		for g in gpu:
			c = calls[g["args"]["correlation"]]
			if s["ts"] <= c["ts"] <= s["ts"] + s["dur"]:
				end = max(end, g["ts"] + g["dur"])
		out[n] = (s["ts"], end)
	return out


# ---- writer (Kineto's output_json.cpp layout) ------------------------------------------

def us(ns):
	return "%d.%03d" % (ns // 1000, ns % 1000)


def jv(v):
	return json.dumps(v)


def fmt_event(e):
	head = ", ".join('"%s": %s' % (k, jv(e[k])) for k in ("ph", "cat", "name", "pid", "tid")
		if k in e)
	if e["ph"] == "X":
		args = ", ".join("%s: %s" % (jv(k), jv(v)) for k, v in e["args"].items())
		return ('  {\n    %s,\n    "ts": %s, "dur": %s,\n    "args": {\n      %s\n    }\n  }'
			% (head, us(e["ts"]), us(e["dur"]), args))
	if e["ph"] == "M":
		(k, v), = e["args"].items()
		return ('  {\n    "name": %s, "ph": "M", "ts": %s, "pid": %s, "tid": %s,\n'
			'    "args": {\n      %s: %s\n    }\n  }'
			% (jv(e["name"]), us(e["ts"]), jv(e["pid"]), jv(e["tid"]), jv(k), jv(v)))
	if e["ph"] in "sf":
		bp = ', "bp": "e"' if e["ph"] == "f" else ""
		return ('  {\n    "ph": "%s", "id": %d, "pid": %s, "tid": %s, "ts": %s,\n'
			'    "cat": "%s", "name": "%s"%s\n  }'
			% (e["ph"], e["id"], jv(e["pid"]), jv(e["tid"]), us(e["ts"]), e["cat"],
				e["name"], bp))
	assert e["ph"] == "i"
	return ('  {\n    "name": %s, "ph": "i", "s": "g",\n    "pid": %s, "tid": %s, "ts": %s\n  }'
		% (jv(e["name"]), jv(e["pid"]), jv(e["tid"]), us(e["ts"])))


def header(rank):
	dist = {"backend": "nccl", "rank": rank, "world_size": WORLD, "pg_count": 1,
		"pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
			"pg_size": WORLD, "ranks": list(range(WORLD))}], "nccl_version": "2.21.5"}
	return ('\n{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {\n'
		'      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,\n'
		'      "computeMajor": 9, "computeMinor": 0,\n'
		'      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
		'      "regsPerBlock": 65536, "warpSize": 32,\n'
		'      "sharedMemPerBlock": 49152, "numSms": 132\n'
		'    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, '
		'"sharedMemPerMultiprocessor": 233472\n    }\n  ],\n'
		'  "cupti_version": 24,\n  "cuda_runtime_version": 12040,\n'
		'  "cuda_driver_version": 12040,\n'
		'  "distributedInfo": %s,\n  "record_shapes": 1,\n'
		'  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": %d,\n  "traceEvents": [\n'
		% (json.dumps(dist), BASE_NS))


def write(path, rank, evs, trace_name):
	text = (header(rank) + ",\n".join(fmt_event(e) for e in evs)
		+ '\n  ],\n  "traceName": %s\n}\n' % jv(trace_name))
	json.loads(text)
	tmp = path + ".tmp"
	with open(tmp, "w") as f:
		f.write(text)
	os.replace(tmp, path)
	return len(text)


def main():
	here = os.path.dirname(os.path.abspath(__file__))
	outdir = os.path.join(here, "tiny-2rank")
	os.makedirs(outdir, exist_ok=True)
	ranks = simulate()
	times = []
	for r in ranks:
		evs = events(r)
		check(r, evs)
		name = "rank-%d.trace.json" % r.rank
		size = write(os.path.join(outdir, name), r.rank, evs, "tiny-2rank/" + name)
		times.append(step_times(evs))
		nccl = [e["dur"] / 1000.0 for e in evs if e.get("cat") == "kernel"
			and e["tid"] == S_NCCL]
		print("%s: %d events, %d bytes; all-reduce kernels (us): %s" % (name, len(evs), size,
			", ".join("%.1f" % d for d in nccl)))
	print("step  " + "  ".join("rank %d (ms)" % k for k in range(WORLD)) + "  job (ms)")
	for n in STEPS:
		per = [(t[n][1] - t[n][0]) / 1e6 for t in times]
		job = (max(t[n][1] for t in times) - min(t[n][0] for t in times)) / 1e6
		print("%4d  " % n + "  ".join("%11.3f" % p for p in per) + "  %8.3f" % job)
	return 0


if __name__ == "__main__":
	sys.exit(main())
