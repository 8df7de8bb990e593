/* SPDX-License-Identifier: MIT */
/*
 * The hardware table: one entry per GPU, as its vendor's datasheet gives it, and the
 * matching of a trace's device name to an entry.  docs/hardware.md shows the same table
 * with its conventions; keep the two in step.
 *
 * Conventions (why each number is written the way it is):
 *
 * - Peaks are dense.  NVIDIA prints tensor-core rates "with sparsity" (2:4 structured
 *   sparsity, footnote "*"), twice what a dense GEMM can reach; SPARSE() halves such a
 *   figure, and every use of it says so.  A figure the datasheet prints without the
 *   footnote (FP64, FP32, the dense column of the A100, L40S and MI300X sheets) is taken
 *   as printed.
 * - A dtype's peak is the highest dense rate the datasheet gives for it: the tensor-core
 *   (matrix) rate where there is one, e.g. FP64 Tensor Core on NVIDIA, FP64 matrix on
 *   the MI300X.  FP32 is the CUDA-core (vector) rate: FP32 GEMMs on tensor cores run as
 *   TF32, which has its own entry.
 * - A rate the datasheet does not give, or an element type the GPU cannot compute on
 *   its tensor cores (FP8 before Hopper, BF16 and TF32 on Volta), is 0: unknown, never
 *   derived.
 * - Rates are SI: GB/s = 1e9 B/s, TB/s = 1e12 B/s, Gb/s = 1e9 bit/s.  CUDA agrees for
 *   memory bandwidth: Nsight Systems reports 1,555,200,000,000 B/s for an A100-SXM4-40GB,
 *   the datasheet's 1,555 GB/s.
 * - Capacities are binary: "80GB" of HBM is 80 GiB.  CUDA's totalGlobalMem of an
 *   A100-SXM4-80GB is 85,174,583,296 bytes (79.3 GiB, the driver keeps the rest), more
 *   than 80e9 and just under 80 GiB; likewise the A100 40GB (42,297,524,224) and the
 *   V100 32GB (34,089,730,048) of the shared traces.
 * - Links are per direction.  NVIDIA gives NVLink as the total of both directions
 *   ("900GB/s" on an H100 SXM is 450 GB/s each way): BIDIR() halves it.  It is the
 *   GPU's whole NVLink (or Infinity Fabric) bandwidth; how much of it one peer gets
 *   depends on the fabric (docs/hardware.md).  PCIe cards give the NVLink bridge where
 *   the datasheet offers one, else PCIe x16.
 * - The NIC rate is that of the vendor's reference node (DGX, or the AMD platform),
 *   divided by its GPUs: a DGX H100 has eight 400 Gb/s ConnectX-7 for eight GPUs, 50e9
 *   B/s each.  A card with no reference node has 0 NIC and 0 GPUs per node.
 *
 * Matching: the first entry in table order one of whose globs matches the device name,
 * ignoring case, wins.  Globs are kept tight (a PCIe card's name never matches an SXM
 * entry), and where two entries could both match, the more specific one comes first.
 */
#include <assert.h>
#include <fnmatch.h>
#include <string.h>

#include "orrery/estimator.h"
#include "banned.h"

#define TERA(x)   (1e12 * (x))
#define PETA(x)   (1e15 * (x))
#define SPARSE(x) ((x) / 2.0) /* a figure printed "with sparsity": dense is half */
#define GBS(x)    (1e9 * (x))
#define TBS(x)    (1e12 * (x))
#define BIDIR(x)  ((x) / 2.0)       /* a total of both directions: one is half */
#define GBIT(x)   (1e9 / 8.0 * (x)) /* Gb/s to bytes/s */
#define GIB(x)    (1073741824.0 * (x))

/* Sources, shared by several entries. */
#define SRC_H100                                                                          \
	"NVIDIA H100 Tensor Core GPU datasheet (H100 SXM and H100 NVL columns), NVIDIA, " \
	"https://resources.nvidia.com/en-us-gpu-resources/h100-datasheet-24306"
#define SRC_DGX_H100                                                                 \
	"NVIDIA DGX H100/H200 User Guide, Introduction (8x single-port ConnectX-7, " \
	"400 Gb/s), "                                                                \
	"NVIDIA, https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html"
#define SRC_A100                                                                   \
	"NVIDIA A100 Tensor Core GPU datasheet (1758950-r4), NVIDIA, "             \
	"https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/" \
	"nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
#define SRC_DGX_A100                                                                    \
	"NVIDIA DGX A100 User Guide (DU-09821-001), Hardware Overview (8x single-port " \
	"ConnectX-6 VPI, 200 Gb/s HDR), NVIDIA, "                                       \
	"https://docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html"
#define SRC_V100                                                                       \
	"NVIDIA Tesla V100 GPU datasheet (Tesla V100 for NVLink column), NVIDIA, "     \
	"https://images.nvidia.com/content/technologies/volta/pdf/"                    \
	"tesla-volta-v100-datasheet-letter-fnl-web.pdf; NVIDIA DGX-1 with Tesla V100 " \
	"System Architecture white paper (network: 4x IB EDR for 8 GPUs), NVIDIA, "    \
	"https://images.nvidia.com/content/pdf/dgx1-v100-system-architecture-whitepaper.pdf"

static const struct orr_gpu_spec specs[] = {
	/* ---- Blackwell ---- */
	{
		.id = "b200",
		.name = "NVIDIA B200 (HGX B200, 180GB)",
		.match = "NVIDIA B200|NVIDIA B200 *|B200",
		.peak_flops = {
			/* The datasheet gives one "FP64/FP64 Tensor Core" rate. */
			[ORR_DTYPE_FP64] = TERA(37),
			[ORR_DTYPE_FP32] = TERA(75),
			[ORR_DTYPE_TF32] = SPARSE(PETA(2.2)),
			[ORR_DTYPE_BF16] = SPARSE(PETA(4.5)),
			[ORR_DTYPE_FP16] = SPARSE(PETA(4.5)),
			[ORR_DTYPE_FP8] = SPARSE(PETA(9)),
			[ORR_DTYPE_INT8] = SPARSE(PETA(9)),
		},
		/* 7.7 TB/s per GPU; the DGX B200 page gives 64 TB/s for 8 (8 TB/s each). */
		.hbm_bytes_per_s = TBS(7.7),
		.hbm_bytes = GIB(180),
		.link_bytes_per_s = BIDIR(TBS(1.8)), /* fifth-generation NVLink */
		.nic_bytes_per_s = GBIT(400),        /* DGX B200: 8x ConnectX-7 for 8 GPUs */
		.gpus_per_node = 8,
		.sms = 148,
		.source = "NVIDIA Blackwell datasheet, Individual Blackwell GPU specifications, "
			  "HGX B200 column, NVIDIA (copy: "
			  "https://nor-tech.com/wp-content/uploads/2026/03/"
			  "blackwell-datasheet-B200.pdf); NVIDIA HGX platform, NVIDIA, "
			  "https://www.nvidia.com/en-us/data-center/hgx/; NVIDIA DGX B200, "
			  "NVIDIA, https://www.nvidia.com/en-us/data-center/dgx-b200/",
	},

	/* ---- Hopper: the NVL and PCIe cards before the SXM parts of the same die ---- */
	{
		.id = "h100-nvl",
		.name = "NVIDIA H100 NVL (94GB)",
		.match = "NVIDIA H100 NVL*|H100 NVL*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(60), /* FP64 Tensor Core; 30 without */
			[ORR_DTYPE_FP32] = TERA(60),
			[ORR_DTYPE_TF32] = SPARSE(TERA(835)),
			[ORR_DTYPE_BF16] = SPARSE(TERA(1671)),
			[ORR_DTYPE_FP16] = SPARSE(TERA(1671)),
			[ORR_DTYPE_FP8] = SPARSE(TERA(3341)),
			[ORR_DTYPE_INT8] = SPARSE(TERA(3341)),
		},
		.hbm_bytes_per_s = TBS(3.9),
		.hbm_bytes = GIB(94),
		.link_bytes_per_s = BIDIR(GBS(600)), /* NVLink bridge, to its pair */
		.sms = 132,
		.source = SRC_H100,
	},
	{
		.id = "h100-pcie",
		.name = "NVIDIA H100 PCIe 80GB",
		.match = "NVIDIA H100 PCIe*|H100 PCIe*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(51), /* FP64 Tensor Core; 26 without */
			[ORR_DTYPE_FP32] = TERA(51),
			[ORR_DTYPE_TF32] = SPARSE(TERA(756)),
			[ORR_DTYPE_BF16] = SPARSE(TERA(1513)),
			[ORR_DTYPE_FP16] = SPARSE(TERA(1513)),
			[ORR_DTYPE_FP8] = SPARSE(TERA(3026)),
			[ORR_DTYPE_INT8] = SPARSE(TERA(3026)),
		},
		.hbm_bytes_per_s = TBS(2.0),
		.hbm_bytes = GIB(80),
		.link_bytes_per_s = BIDIR(GBS(600)), /* NVLink bridge, to its pair */
		.sms = 114,
		.source = "NVIDIA H100 Tensor Core GPU datasheet, 2022 edition (H100 SXM and "
			  "H100 PCIe columns; the current edition replaced PCIe by NVL), NVIDIA, "
			  "https://resources.nvidia.com/en-us-tensor-core/"
			  "nvidia-tensor-core-gpu-datasheet (reproduced by an NVIDIA partner: "
			  "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html)",
	},
	{
		/*
		 * "NVIDIA H100" is what CUDA calls the 96 GB H100 SXM5 (the kineto unit-test
		 * traces: 132 SMs, 95.1 GiB); NVIDIA publishes no datasheet for it, and its
		 * compute is that of this entry.  Its capacity is the trace's, not this one.
		 */
		.id = "h100-sxm",
		.name = "NVIDIA H100 SXM5 80GB",
		.match = "NVIDIA H100 80GB HBM3*|NVIDIA H100|NVIDIA H100 SXM*|H100 SXM*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(67), /* FP64 Tensor Core; 34 without */
			[ORR_DTYPE_FP32] = TERA(67),
			[ORR_DTYPE_TF32] = SPARSE(TERA(989)),
			[ORR_DTYPE_BF16] = SPARSE(TERA(1979)),
			[ORR_DTYPE_FP16] = SPARSE(TERA(1979)),
			[ORR_DTYPE_FP8] = SPARSE(TERA(3958)),
			[ORR_DTYPE_INT8] = SPARSE(TERA(3958)),
		},
		.hbm_bytes_per_s = TBS(3.35),
		.hbm_bytes = GIB(80),
		.link_bytes_per_s = BIDIR(GBS(900)),
		.nic_bytes_per_s = GBIT(400), /* DGX H100: 8x ConnectX-7 for 8 GPUs */
		.gpus_per_node = 8,
		.sms = 132,
		.source = SRC_H100 "; " SRC_DGX_H100,
	},
	{
		/* The H100 SXM's compute with HBM3e; "H200 NVL" is another card. */
		.id = "h200-sxm",
		.name = "NVIDIA H200 SXM 141GB",
		.match = "NVIDIA H200|NVIDIA H200 SXM*|H200 SXM*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(67), /* FP64 Tensor Core; 34 without */
			[ORR_DTYPE_FP32] = TERA(67),
			[ORR_DTYPE_TF32] = SPARSE(TERA(989)),
			[ORR_DTYPE_BF16] = SPARSE(TERA(1979)),
			[ORR_DTYPE_FP16] = SPARSE(TERA(1979)),
			[ORR_DTYPE_FP8] = SPARSE(TERA(3958)),
			[ORR_DTYPE_INT8] = SPARSE(TERA(3958)),
		},
		.hbm_bytes_per_s = TBS(4.8),
		.hbm_bytes = GIB(141),
		.link_bytes_per_s = BIDIR(GBS(900)),
		.nic_bytes_per_s = GBIT(400), /* DGX H200: 8x ConnectX-7 for 8 GPUs */
		.gpus_per_node = 8,
		.sms = 132,
		.source = "NVIDIA H200 Tensor Core GPU, specifications (H200 SXM column), "
			  "NVIDIA, https://www.nvidia.com/en-us/data-center/h200/; " SRC_DGX_H100,
	},
	{
		/*
		 * The export H100: FP64 cut to 1 TFLOPS and NVLink to 400 GB/s, the rest as
		 * the H100 SXM.  NVIDIA's datasheet for it is published in China only and
		 * was not readable here: the figures are those it is quoted with.
		 */
		.id = "h800-sxm",
		.name = "NVIDIA H800 SXM 80GB",
		.match = "NVIDIA H800|NVIDIA H800 80GB HBM3*|NVIDIA H800 SXM*|H800 SXM*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(1),
			[ORR_DTYPE_FP32] = TERA(67),
			[ORR_DTYPE_TF32] = SPARSE(TERA(989)),
			[ORR_DTYPE_BF16] = SPARSE(TERA(1979)),
			[ORR_DTYPE_FP16] = SPARSE(TERA(1979)),
			[ORR_DTYPE_FP8] = SPARSE(TERA(3958)),
			[ORR_DTYPE_INT8] = SPARSE(TERA(3958)),
		},
		.hbm_bytes_per_s = TBS(3.35),
		.hbm_bytes = GIB(80),
		.link_bytes_per_s = BIDIR(GBS(400)),
		.gpus_per_node = 8, /* DGX H800; its NICs are not given */
		.sms = 132,
		.source = "NVIDIA H800 Tensor Core GPU datasheet (zh-CN), NVIDIA, "
			  "https://www.nvidia.cn/content/dam/en-zz/Solutions/Data-Center/h800/"
			  "nvidia-h800-datasheet-2029415.pdf (address as cited by third parties; "
			  "not read directly)",
	},

	/* ---- Ampere ---- */
	{
		.id = "a100-80gb-pcie",
		.name = "NVIDIA A100 80GB PCIe",
		.match = "NVIDIA A100 80GB PCIe*|A100 80GB PCIe*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(19.5), /* FP64 Tensor Core; 9.7 without */
			[ORR_DTYPE_FP32] = TERA(19.5),
			[ORR_DTYPE_TF32] = TERA(156), /* dense column; 312 with sparsity */
			[ORR_DTYPE_BF16] = TERA(312),
			[ORR_DTYPE_FP16] = TERA(312),
			[ORR_DTYPE_INT8] = TERA(624),
		},
		.hbm_bytes_per_s = GBS(1935),
		.hbm_bytes = GIB(80),
		.link_bytes_per_s = BIDIR(GBS(600)), /* NVLink bridge for 2 GPUs */
		.sms = 108,
		.source = SRC_A100,
	},
	{
		.id = "a100-80gb-sxm",
		.name = "NVIDIA A100 80GB SXM4",
		.match = "NVIDIA A100-SXM4-80GB*|NVIDIA A100-SXM-80GB*|A100-SXM4-80GB*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(19.5), /* FP64 Tensor Core; 9.7 without */
			[ORR_DTYPE_FP32] = TERA(19.5),
			[ORR_DTYPE_TF32] = TERA(156), /* dense column; 312 with sparsity */
			[ORR_DTYPE_BF16] = TERA(312),
			[ORR_DTYPE_FP16] = TERA(312),
			[ORR_DTYPE_INT8] = TERA(624),
		},
		.hbm_bytes_per_s = GBS(2039),
		.hbm_bytes = GIB(80),
		.link_bytes_per_s = BIDIR(GBS(600)),
		.nic_bytes_per_s = GBIT(200), /* DGX A100: 8x ConnectX-6 for 8 GPUs */
		.gpus_per_node = 8,
		.sms = 108,
		.source = SRC_A100 "; " SRC_DGX_A100,
	},
	{
		/*
		 * PG509-200 is the board name that some drivers report for the A100 SXM4
		 * 40GB (the HTA traces: 108 SMs, 39.4 GiB, as the A100-SXM4-40GB of the
		 * Nsight Systems trace).
		 */
		.id = "a100-40gb-sxm",
		.name = "NVIDIA A100 40GB SXM4",
		.match = "NVIDIA A100-SXM4-40GB*|NVIDIA A100-PG509-200*|A100-SXM4-40GB*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(19.5), /* FP64 Tensor Core; 9.7 without */
			[ORR_DTYPE_FP32] = TERA(19.5),
			[ORR_DTYPE_TF32] = TERA(156), /* dense column; 312 with sparsity */
			[ORR_DTYPE_BF16] = TERA(312),
			[ORR_DTYPE_FP16] = TERA(312),
			[ORR_DTYPE_INT8] = TERA(624),
		},
		.hbm_bytes_per_s = GBS(1555),
		.hbm_bytes = GIB(40),
		.link_bytes_per_s = BIDIR(GBS(600)),
		.nic_bytes_per_s = GBIT(200), /* DGX A100: 8x ConnectX-6 for 8 GPUs */
		.gpus_per_node = 8,
		.sms = 108,
		.source = SRC_A100 "; " SRC_DGX_A100,
	},
	{
		/*
		 * The export A100: NVLink cut to 400 GB/s, the rest as the A100 80GB SXM.
		 * The datasheet is NVIDIA's Chinese one; it was not readable here, only
		 * quoted.
		 */
		.id = "a800-80gb-sxm",
		.name = "NVIDIA A800 80GB SXM4",
		.match = "NVIDIA A800-SXM4-80GB*|A800-SXM4-80GB*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(19.5), /* FP64 Tensor Core; 9.7 without */
			[ORR_DTYPE_FP32] = TERA(19.5),
			[ORR_DTYPE_TF32] = TERA(156), /* dense column; 312 with sparsity */
			[ORR_DTYPE_BF16] = TERA(312),
			[ORR_DTYPE_FP16] = TERA(312),
			[ORR_DTYPE_INT8] = TERA(624),
		},
		.hbm_bytes_per_s = GBS(2039),
		.hbm_bytes = GIB(80),
		.link_bytes_per_s = BIDIR(GBS(400)),
		.gpus_per_node = 8, /* DGX A800; its NICs are not given */
		.sms = 108,
		.source = "NVIDIA A800 Tensor Core GPU datasheet (zh-CN, 2521686), NVIDIA "
			  "(copy: https://deepbaytech.com/images/"
			  "nvidia-a800-datasheet-nvidia-a4-2521686-zhCN.pdf; not read directly)",
	},

	/* ---- Volta: no BF16, TF32 or FP8 tensor cores; INT8 not given ---- */
	{
		/* The DGX Station's V100 (DGXS) is the same NVLink part. */
		.id = "v100-sxm2-32gb",
		.name = "NVIDIA Tesla V100 SXM2 32GB",
		.match = "Tesla V100-SXM2-32GB*|Tesla V100-DGXS-32GB*|*V100-SXM2-32GB*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(7.8),
			[ORR_DTYPE_FP32] = TERA(15.7),
			[ORR_DTYPE_FP16] = TERA(125), /* "Tensor Performance", no sparsity */
		},
		.hbm_bytes_per_s = GBS(900),
		.hbm_bytes = GIB(32),
		.link_bytes_per_s = BIDIR(GBS(300)),
		.nic_bytes_per_s = GBIT(4 * 100) / 8, /* DGX-1: 4x EDR for 8 GPUs */
		.gpus_per_node = 8,
		.sms = 80,
		.source = SRC_V100,
	},
	{
		.id = "v100-sxm2-16gb",
		.name = "NVIDIA Tesla V100 SXM2 16GB",
		.match = "Tesla V100-SXM2-16GB*|Tesla V100-DGXS-16GB*|*V100-SXM2-16GB*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(7.8),
			[ORR_DTYPE_FP32] = TERA(15.7),
			[ORR_DTYPE_FP16] = TERA(125), /* "Tensor Performance", no sparsity */
		},
		.hbm_bytes_per_s = GBS(900),
		.hbm_bytes = GIB(16),
		.link_bytes_per_s = BIDIR(GBS(300)),
		.nic_bytes_per_s = GBIT(4 * 100) / 8, /* DGX-1: 4x EDR for 8 GPUs */
		.gpus_per_node = 8,
		.sms = 80,
		.source = SRC_V100,
	},

	/* ---- Ada ---- */
	{
		/*
		 * The datasheet prints dense | sparse.  Its dense BF16/FP16 (362.05) is not
		 * half its sparse 733, nor half its dense FP8 (733): taken as printed.
		 */
		.id = "l40s",
		.name = "NVIDIA L40S",
		.match = "NVIDIA L40S*|L40S*",
		.peak_flops = {
			/* FP64 not given */
			[ORR_DTYPE_FP32] = TERA(91.6),
			[ORR_DTYPE_TF32] = TERA(183),
			[ORR_DTYPE_BF16] = TERA(362.05),
			[ORR_DTYPE_FP16] = TERA(362.05),
			[ORR_DTYPE_FP8] = TERA(733),
			[ORR_DTYPE_INT8] = TERA(733),
		},
		.hbm_bytes_per_s = GBS(864), /* GDDR6 */
		.hbm_bytes = GIB(48),
		.link_bytes_per_s = BIDIR(GBS(64)), /* no NVLink: PCIe Gen4 x16 */
		.sms = 142,
		.source = "NVIDIA L40S GPU datasheet, NVIDIA, "
			  "https://www.nvidia.com/en-us/data-center/l40s/",
	},

	/* ---- AMD CDNA 3 ---- */
	{
		/*
		 * Seven Infinity Fabric links of 128 GB/s (both directions) to the seven
		 * other GPUs of the platform: 448 GB/s out in all, 64 GB/s to one peer.
		 */
		.id = "mi300x",
		.name = "AMD Instinct MI300X",
		.match = "AMD Instinct MI300X*|MI300X*",
		.peak_flops = {
			[ORR_DTYPE_FP64] = TERA(163.4), /* matrix; 81.7 vector */
			[ORR_DTYPE_FP32] = TERA(163.4),
			[ORR_DTYPE_TF32] = TERA(653.7), /* printed without sparsity */
			[ORR_DTYPE_BF16] = TERA(1307.4),
			[ORR_DTYPE_FP16] = TERA(1307.4),
			[ORR_DTYPE_FP8] = TERA(2614.9),
			[ORR_DTYPE_INT8] = TERA(2614.9),
		},
		.hbm_bytes_per_s = TBS(5.3),
		.hbm_bytes = GIB(192),
		.link_bytes_per_s = 7 * BIDIR(GBS(128)),
		.gpus_per_node = 8, /* AMD Instinct MI300X Platform; no NICs in it */
		.sms = 304,
		.source = "AMD Instinct MI300X Accelerator data sheet, AMD, "
			  "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/"
			  "data-sheets/amd-instinct-mi300x-data-sheet.pdf; AMD Instinct MI300X "
			  "Platform data sheet, AMD, "
			  "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/"
			  "data-sheets/amd-instinct-mi300x-platform-data-sheet.pdf",
	},
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

static const char *const dtype_names[ORR_DTYPE_COUNT] = {
	[ORR_DTYPE_FP64] = "fp64", [ORR_DTYPE_FP32] = "fp32", [ORR_DTYPE_TF32] = "tf32",
	[ORR_DTYPE_BF16] = "bf16", [ORR_DTYPE_FP16] = "fp16", [ORR_DTYPE_FP8] = "fp8",
	[ORR_DTYPE_INT8] = "int8",
};

const char *orr_dtype_name(enum orr_dtype t)
{
	if ((unsigned)t >= ORR_DTYPE_COUNT)
		return NULL;
	return dtype_names[t];
}

const struct orr_gpu_spec *orr_gpu_specs(size_t *ret_n)
{
	*ret_n = NSPECS;
	return specs;
}

const struct orr_gpu_spec *orr_gpu_spec_by_id(const char *id)
{
	if (!id)
		return NULL;
	for (size_t i = 0; i < NSPECS; i++)
		if (strcmp(specs[i].id, id) == 0)
			return &specs[i];
	return NULL;
}

/* Whether one of the '|'-separated globs matches name, ignoring case. */
static bool globs_match(const char *globs, const char *name)
{
	char glob[128];

	for (const char *p = globs;; p++) {
		size_t n = strcspn(p, "|");

		assert(n < sizeof(glob)); /* the table's own globs */
		memcpy(glob, p, n);
		glob[n] = '\0';
		if (n && fnmatch(glob, name, FNM_CASEFOLD) == 0)
			return true;
		p += n;
		if (!*p)
			return false;
	}
}

const struct orr_gpu_spec *orr_gpu_spec_match(const char *device_name)
{
	if (!device_name || !*device_name)
		return NULL;
	for (size_t i = 0; i < NSPECS; i++)
		if (globs_match(specs[i].match, device_name))
			return &specs[i];
	return NULL;
}
