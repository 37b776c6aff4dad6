# scenarios/: ready INI files, embedded in the binary as a GResource.
# Every .ini below must be listed here and in scenarios/scenarios.gresource.xml (a test checks both).
scenario_files = \
	scenarios/hardware/a100-sxm-80g.ini \
	scenarios/hardware/a100-sxm-40g.ini \
	scenarios/hardware/h100-sxm.ini \
	scenarios/hardware/h100-sxm-hbm2e-96g.ini \
	scenarios/hardware/h800-sxm.ini \
	scenarios/hardware/h100-nvl.ini \
	scenarios/hardware/h100-pcie.ini \
	scenarios/hardware/h20.ini \
	scenarios/hardware/mi300x.ini \
	scenarios/hardware/mi325x.ini \
	scenarios/hardware/mi350x.ini \
	scenarios/hardware/mi355x.ini \
	scenarios/hardware/h200-sxm.ini \
	scenarios/hardware/b200.ini \
	scenarios/hardware/b300.ini \
	scenarios/hardware/gb200.ini \
	scenarios/hardware/gb300.ini \
	scenarios/hardware/vr200-nvl144.ini \
	scenarios/calibration/ampere.ini \
	scenarios/calibration/hopper.ini \
	scenarios/calibration/blackwell.ini \
	scenarios/calibration/uncalibrated.ini \
	scenarios/fabrics/ndr400-rail-optimized.ini \
	scenarios/fabrics/pcie-pairs-ndr400.ini \
	scenarios/fabrics/roce400-meta-clos.ini \
	scenarios/fabrics/xdr800-rail-optimized.ini \
	scenarios/fabrics/hdr200-rail-optimized.ini \
	scenarios/fabrics/gb200-nvl72-eth800.ini \
	scenarios/models/gpt3-175b.ini \
	scenarios/tp-overlap/h100-tp4-pp8-mbs1.ini \
	scenarios/tp-overlap/mlperf-v3.0-h100-tp4-pp8-mbs1.ini \
	scenarios/tp-overlap/mlperf-v4.0-h100-tp4.ini \
	scenarios/tp-overlap/mlperf-v4.1-h100-tp4-mbs2.ini \
	scenarios/tp-overlap/nemo-bf16-b200-h16384-tp4-cp2-mbs1-seq8192.ini \
	scenarios/tp-overlap/nemo-bf16-h100-h16384-tp8-cp2-mbs1-seq8192.ini \
	scenarios/tp-overlap/nemo-bf16-h100-h8192-tp4-mbs1-seq8192.ini \
	scenarios/tp-overlap/nemo-fp8-b200-h16384-tp4-cp2-mbs1-seq8192.ini \
	scenarios/tp-overlap/nemo-fp8-h100-h12288-tp4-mbs1-seq2048.ini \
	scenarios/tp-overlap/nemo-fp8-h100-h16384-tp8-cp2-mbs1-seq8192.ini \
	scenarios/tp-overlap/nemo-fp8-h100-h8192-tp4-mbs1-seq8192.ini \
	scenarios/models/llama3.1-8b.ini \
	scenarios/models/llama3.1-70b.ini \
	scenarios/models/llama3.1-405b.ini \
	scenarios/models/mixtral-8x7b.ini \
	scenarios/models/bert-large.ini \
	scenarios/models/bloom-176b.ini \
	scenarios/models/mpt-70b.ini \
	scenarios/models/nemotron-4-340b.ini \
	scenarios/models/gpt-oss-120b.ini \
	scenarios/models/qwen3-235b-a22b.ini \
	scenarios/models/llama4-scout.ini \
	scenarios/models/llama4-maverick.ini \
	scenarios/models/deepseek-v3.ini \
	scenarios/models/megatron-gpt-1.7b.ini \
	scenarios/models/megatron-gpt-3.6b.ini \
	scenarios/models/megatron-gpt-7.5b.ini \
	scenarios/models/megatron-gpt-18.4b.ini \
	scenarios/models/megatron-gpt-39.1b.ini \
	scenarios/models/megatron-gpt-76.1b.ini \
	scenarios/models/megatron-gpt-145.6b.ini \
	scenarios/models/megatron-gpt-177b.ini \
	scenarios/models/megatron-gpt-310.1b.ini \
	scenarios/models/megatron-gpt-529.6b.ini \
	scenarios/models/megatron-gpt-1008b.ini \
	scenarios/runs/gpt3-175b-mlperf-v3.1.ini \
	scenarios/runs/mpt-70b-h100-512.ini \
	scenarios/runs/gpt-oss-120b-h100-64.ini \
	scenarios/runs/qwen3-235b-a22b-h100-256.ini \
	scenarios/runs/deepseek-v3-h800-2048.ini \
	scenarios/runs/bloom-176b-a100-384.ini \
	scenarios/runs/nemotron-4-340b-h100-6144.ini \
	scenarios/runs/gpt-177b-h100-megatron-strong-96.ini \
	scenarios/runs/llama31-405b-h100-meta-16k.ini \
	scenarios/runs/llama31-405b-h200-mlperf-v5.1-nebius.ini \
	scenarios/runs/llama31-8b-b300-mlperf-v5.1-dell.ini \
	scenarios/runs/llama31-8b-b200-mlperf-v5.1-nebius.ini \
	scenarios/runs/llama31-8b-gb200-mlperf-v5.1-nvidia-72.ini \
	scenarios/runs/llama31-8b-h200-mlperf-v5.1-hpe.ini \
	scenarios/runs/llama31-8b-mi350x-mlperf-v5.1.ini \
	scenarios/runs/llama31-8b-mi355x-mlperf-v5.1.ini \
	scenarios/runs/gpt3-175b-mlperf-v3.1-azure.ini \
	scenarios/runs/gpt3-175b-mlperf-v4.0.ini \
	scenarios/runs/bert-large-mlperf-v3.0-azure.ini \
	scenarios/runs/bert-large-mlperf-v1.1-nvidia-4320.ini \
	scenarios/runs/llama31-405b-gb200-mlperf-v6.0.ini
scenario_files += \
	scenarios/reliability/llama3-405b-h100.ini \
	scenarios/cost/h100-cloud-example.ini

dist_noinst_DATA += $(scenario_files) scenarios/scenarios.gresource.xml scenarios/README.md
nodist_libtrainsim_a_SOURCES = scenarios/resources.c
BUILT_SOURCES += scenarios/resources.c
CLEANFILES += scenarios/resources.c

scenarios/resources.c: $(srcdir)/scenarios/scenarios.gresource.xml $(scenario_files)
	$(AM_V_GEN)$(MKDIR_P) scenarios && \
	$(GLIB_COMPILE_RESOURCES) --target=$@ --sourcedir=$(srcdir)/scenarios --generate-source \
	  --manual-register --c-name trainsim_scenarios $(srcdir)/scenarios/scenarios.gresource.xml
