#pragma once

#include <cstdint>

namespace servesim {

// The namespaces workloads mix their segment ids with (token_content.h, mix_ids), one per kind
// of content, so that a system prompt's group, a Mooncake hash id and a conversation's turn
// never share an id even when their own numbers agree. Arbitrary constants, fixed for ever:
// changing one changes every block identity the workload produces.
inline constexpr std::uint64_t kSharedPrefixContent = 0x5a17ed9f0e1c2b3dULL;
inline constexpr std::uint64_t kSharedPrefixQuestion = 0x9e3a51c07d2f8b61ULL;
inline constexpr std::uint64_t kMooncakeContent = 0x3000caceb10c4512ULL;
inline constexpr std::uint64_t kSessionContent = 0x5e5510c0417e4e7bULL;

}  // namespace servesim
