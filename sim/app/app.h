#pragma once

// The application layer's one public entry. Every caller above it (cli, python, study,
// calibration, bench, validation) includes this header and no other of sim/app/: what a
// run is made of (the configuration assembled from a file, flags and overrides), running it,
// writing its outputs, and the reports and registries the commands print. The layering test
// (tests/architecture/layering_test.cpp) holds callers to it.

#include "sim/app/config_assembly.h"    // ConfigSources -> the configuration document
#include "sim/app/engine_defaults.h"    // platform_warning: a CUDA engine profile on ROCm
#include "sim/app/kv_report.h"          // servesim kv
#include "sim/app/output_directory.h"   // publish_output: a folder written whole or not at all
#include "sim/app/policies.h"           // the registries and policy_menus
#include "sim/app/policy_list.h"        // "scheduler:allocator:..." specs
#include "sim/app/role_throughput.h"    // one replica's best throughput, for rate matching
#include "sim/app/roofline_report.h"    // servesim roofline
#include "sim/app/run_error_bands.h"    // error bands of a run, and summary.json with them
#include "sim/app/run_flags.h"          // the run's flags and vLLM's names for them
#include "sim/app/run_outputs.h"        // summary.json, requests.csv, ... of one run
#include "sim/app/run_settings.h"       // settings given by name -> ConfigSources
#include "sim/app/simulation.h"         // run_simulation
#include "sim/app/simulation_limits.h"  // sizes one machine cannot simulate
#include "sim/app/startup_check.h"      // whether a deployment starts (startup_verdict)
#include "sim/app/vllm_names.h"         // vLLM's value names (kv-cache-dtype, quantization)
