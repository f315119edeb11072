#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/memory/decode_round_allocator.h"
#include "sim/memory/impl/block_pool.h"
#include "sim/memory/impl/block_table.h"
#include "sim/memory/impl/block_watermark.h"
#include "sim/memory/impl/decode_cohort.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/memory/sequence_table.h"

namespace servesim {

// vLLM's PagedAttention allocation: the cache is cut into fixed blocks of `block_size`
// tokens, a sequence takes blocks as its tokens arrive, and the only waste is the unfilled
// tail of each sequence's last block. New sequences are admitted only while a watermark of
// free blocks remains, so running sequences can still grow (vLLM keeps 1%).
//
// With prefix caching (vLLM V1's automatic prefix caching) full blocks are named by the
// identity of their content once computed (commit_computed), a block freed by its last
// holder stays hittable until it is evicted, and a sequence admitted with content starts
// holding the longest run of its leading blocks that the cache names (cached_prefix_tokens),
// shared with whoever holds them. Blocks past a sequence's content are its own: they are
// named by its id and the block's place, so that only it hits them (after a preemption by
// recompute). A sequence without content names nothing and looks nothing up.
//
// Three layers, as vLLM's KV-cache manager over its block pool: this class keeps one
// BlockTable per sequence (the request-level API, the plain path), BlockPool the physical
// blocks, and DecodeCohort the decode fast path (IDecodeRoundAllocator), which advances the
// last decode batch's tables lazily.
class PagedAllocator final : public IKvCacheAllocator, public IDecodeRoundAllocator {
 public:
  // `host_cache_blocks` > 0 (prefix caching only): a host tier of that many blocks keeps
  // blocks evicted from the GPU, and a hit on them loads them back (PrefixAdmission).
  PagedAllocator(std::int64_t capacity_tokens, std::int64_t block_size,
                 double watermark_fraction = 0.01, bool prefix_caching = false,
                 std::int64_t host_cache_blocks = 0);

  bool fits_when_empty(std::int64_t final_tokens) const override;
  bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const override;
  std::int64_t admit(std::int64_t sequence, std::int64_t tokens,
                     std::int64_t final_tokens) override;
  bool can_grow(std::int64_t sequence, std::int64_t tokens) const override;
  void grow(std::int64_t sequence, std::int64_t tokens) override;
  bool try_grow(std::int64_t sequence, std::int64_t tokens) override;
  void release(std::int64_t sequence) override;

  std::int64_t prefix_block_tokens() const override {
    return pool_.prefix_caching() ? block_size_ : 0;
  }
  std::int64_t cached_prefix_tokens(const PrefixKey& key) const override;
  bool can_admit_prefix(const PrefixKey& key, std::int64_t tokens,
                        std::int64_t final_tokens) const override;
  PrefixAdmission admit_prefix(const PrefixKey& key, std::int64_t tokens,
                               std::int64_t final_tokens) override;
  void commit_computed(std::int64_t sequence, std::int64_t computed_tokens) override;

  KvUsage usage(std::int64_t next_final_tokens) const override;
  std::int64_t capacity_tokens() const override { return pool_.total() * block_size_; }
  std::int64_t sequences() const override { return static_cast<std::int64_t>(tables_.size()); }

  // The decode fast path: the last decode batch again (perhaps with new sequences after it)
  // is one round of the cohort, with no look-ups; decode rounds are counted by a table's
  // tokens modulo the block size, so each costs O(1) plus the blocks it hands out.
  IDecodeRoundAllocator* decode_rounds() override { return this; }
  std::size_t grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens) override {
    return grow_each(sequences, tokens, false);
  }
  std::size_t grow_each_after(std::span<const std::int64_t> sequences,
                              std::int64_t tokens) override {
    return grow_each(sequences, tokens, true);
  }
  std::int64_t decode_rounds_available(std::span<const std::int64_t> sequences,
                                       std::int64_t max_rounds) const override;
  void grow_decode_rounds(std::span<const std::int64_t> sequences, std::int64_t next_final_tokens,
                          std::span<KvUsage> usages) override;
  // Through preemption while the pool is anonymous (no block named yet: a preempted table
  // frees a count) and the sequences are the cohort, perhaps with new ones after it, which
  // join it; otherwise one stretch. usage() reads no next_final_tokens.
  void decode_stretches(std::span<const std::int64_t> sequences, std::int64_t max_rounds,
                        const std::function<bool(const DecodeRoundStretch&)>& go_on,
                        std::vector<DecodeRoundStretch>& stretches) override;
  void grow_decode_stretches(std::span<const std::int64_t> sequences,
                             std::span<const DecodeRoundStretch> stretches,
                             std::int64_t next_final_tokens, std::span<KvUsage> usages) override;

  std::int64_t block_size() const { return block_size_; }
  std::int64_t total_blocks() const { return pool_.total(); }
  std::int64_t free_blocks() const { return pool_.free(); }
  // Free blocks holding reusable KV (prefix caching; 0 without).
  std::int64_t cached_blocks() const { return pool_.cached_free(); }
  // The blocks a sequence holds.
  std::int64_t held_blocks(std::int64_t sequence) const { return table(sequence).held; }
  // Their physical ids, in logical order (what a paged-attention kernel reads through): none
  // until the first block is named (prefix caching), as no hit or eviction can tell them
  // apart before (BlockPool's anonymous pool).
  const std::vector<std::int32_t>& block_table(std::int64_t sequence) const {
    return table(sequence).blocks;
  }
  bool block_ids_known() const { return !pool_.anonymous(); }

 private:
  static constexpr char kName[] = "paged allocator";
  std::int64_t blocks_for(std::int64_t tokens) const {
    return (tokens + block_size_ - 1) / block_size_;
  }
  // Room for `tokens` more: the spare slots, then whole free blocks (no division).
  bool fits(const BlockTable& t, std::int64_t tokens) const {
    return tokens - cohort_.spare_of(t) <= pool_.free() * block_size_;
  }
  // The per-token path, for a table out of the cohort: conservation is checked with every
  // usage() (once an iteration).
  void grow(BlockTable& t, std::int64_t tokens) {
    t.tokens += tokens;
    token_states_ += tokens;
    if (tokens <= t.spare) {
      t.spare -= tokens;
    } else {
      // Whole blocks for the tokens the last block's spare slots do not cover.
      const std::int64_t uncovered = tokens - t.spare;
      const std::int64_t new_blocks = blocks_for(uncovered);
      t.spare = new_blocks * block_size_ - uncovered;
      take_blocks(pool_, t, new_blocks);
    }
  }
  // The identity of a sequence's block `index`: its content's, or past the content its own.
  static std::uint64_t identity(std::int64_t sequence, std::span<const std::uint64_t> hashes,
                                std::int64_t index);
  // Calls hit(block) for each block of the longest run of `key`'s leading blocks that the
  // cache names, at most `max_blocks` (and so that its last token is computed); returns how
  // many.
  template <class Hit>
  std::int64_t for_each_hit(const PrefixKey& key, std::int64_t max_blocks, Hit hit) const;
  // After `gpu_hits` blocks found on the GPU, the blocks that follow them in the host tier,
  // up to `max_blocks` hits in all: how many.
  std::int64_t host_hits(const PrefixKey& key, std::int64_t gpu_hits,
                         std::int64_t max_blocks) const;
  std::int64_t hit_cap(const PrefixKey& key, std::int64_t max_blocks) const {
    return std::min(max_blocks, (key.tokens - 1) / block_size_);
  }
  // Tokens and physical token states differ by the slots of shared blocks counted once per
  // extra holder.
  std::int64_t physical_token_states() const {
    return token_states_ - pool_.extra_holders() * block_size_;
  }
  // The sequence's table; throws for an unknown one.
  const BlockTable& table(std::int64_t sequence) const {
    const BlockTable* t = tables_.find(sequence);
    if (t == nullptr) throw_unknown(sequence);
    return *t;
  }
  [[noreturn]] static void throw_unknown(std::int64_t sequence);
  BlockTable& table(std::int64_t sequence) {
    return const_cast<BlockTable&>(std::as_const(*this).table(sequence));
  }
  // The cohort becomes `sequences` (settled tables, looked up), in that order.
  void form_cohort(std::span<const std::int64_t> sequences);
  // Settled tables join the cohort's end, in order.
  void join_cohort(std::span<const std::int64_t> sequences);
  // Whether `sequences` are the cohort, none behind, once the tables after its own (a plan's
  // prefilled sequences, after its decodes) have joined it; they join only if the cohort
  // begins them.
  bool cohort_continues_into(std::span<const std::int64_t> sequences);
  // grow_each; `after`: the cohort is what the plan grew so far, and `sequences` join it.
  std::size_t grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens, bool after);
  // Checked with every usage() (once an iteration); the message is built out of line.
  void check_conservation() const {
    if (pool_.conserved() && physical_token_states() >= 0 &&
        physical_token_states() <= pool_.used() * block_size_) {
      [[likely]] return;
    }
    conservation_broken();
  }
  [[noreturn, gnu::noinline, gnu::cold]] void conservation_broken() const;
  // Before the first name: every held block gets an id (BlockPool::identify).
  void identify_blocks();

  std::int64_t block_size_;
  BlockPool pool_;
  BlockWatermark watermark_;
  std::int64_t token_states_ = 0;
  SequenceTable<BlockTable> tables_;
  DecodeCohort cohort_;
};

}  // namespace servesim
