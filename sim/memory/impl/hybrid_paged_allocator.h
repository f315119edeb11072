#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/memory/impl/block_pool.h"
#include "sim/memory/impl/block_watermark.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/memory/kv_pool_layout.h"
#include "sim/memory/sequence_table.h"

namespace servesim {

// vLLM V1's hybrid KV-cache manager (kv_cache_coordinator.py over single_type_kv_cache_manager
// .py): one pool of blocks shared by the layout's groups, and per sequence one block table per
// group, each kept by its kind's rule:
//   full attention, MLA   a block for every block_tokens tokens, held to the end;
//   sliding window W      the same, but before each allocation the blocks wholly before the
//                         window of the next token (token index < computed - W + 1) are freed;
//   chunked local C       the same, freeing the blocks before the chunk of the next token;
//   recurrent state       one block (a page holding the layers' state) from admission on.
// Blocks are freed before the allocation that follows them, as vLLM's allocate_slots calls
// remove_skipped_blocks first; a sequence's tokens held are its computed ones. A step's new
// tokens all take blocks (their K and V are written before attention reads the window), so a
// long prompt chunk briefly holds its whole length in a window group too. Allocation fails
// when the new blocks of all groups together exceed the free ones (the scheduler preempts as
// with PagedAllocator); admission keeps the same watermark of free blocks.
//
// Memory is reported in token slots, a block counting block_tokens slots (the layout's
// smallest attention block): token states are the tokens held in live blocks (a recurrent
// block counts whole), internal fragmentation the rest of the used blocks. The categories
// partition total blocks x block_tokens.
//
// Prefix caching (vLLM V1's, as PagedAllocator keeps it) for layouts of full-attention, MLA,
// sliding-window and chunked-local groups of one block size: a computed full block is named by
// its content's identity and its group, and stays hittable once freed (by its sequence's end
// or by the window or chunk passing it) until taken again. A look-up follows vLLM's
// HybridKVCacheCoordinator: the longest run of leading blocks every full group holds, then
// the longest prefix of that within which every window group holds the window's blocks
// before the hit point (ceil((W - 1) / block) of them; all its leading blocks when shorter)
// and every chunked-local group the blocks of the hit point's chunk before it (none when the
// hit ends on a chunk boundary), shortened until every group agrees. A hit shares those
// blocks; the earlier ones are skipped. Layouts with recurrent states cache nothing (vLLM
// keeps those states only at aligned positions, in its optional "align" mode).
//
// A decode grow of one token that frees and takes no block (most of them: one in a block's
// worth takes, one frees behind a window) only counts, in O(1) (Table::quiet_grows).
class HybridPagedAllocator final : public IKvCacheAllocator {
 public:
  // Throws InfeasibleError when the pool has fewer blocks than the layout has groups.
  HybridPagedAllocator(const KvPoolLayout& layout, std::int64_t total_blocks,
                       double watermark_fraction = 0.01, bool prefix_caching = false);

  bool fits_when_empty(std::int64_t final_tokens) const override;
  bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const override;
  std::int64_t admit(std::int64_t sequence, std::int64_t tokens,
                     std::int64_t final_tokens) override;
  bool can_grow(std::int64_t sequence, std::int64_t tokens) const override;
  void grow(std::int64_t sequence, std::int64_t tokens) override;
  bool try_grow(std::int64_t sequence, std::int64_t tokens) override;
  void release(std::int64_t sequence) override;

  std::int64_t prefix_block_tokens() const override { return caching_ ? slot_tokens_ : 0; }
  std::int64_t cached_prefix_tokens(const PrefixKey& key) const override;
  bool can_admit_prefix(const PrefixKey& key, std::int64_t tokens,
                        std::int64_t final_tokens) const override;
  PrefixAdmission admit_prefix(const PrefixKey& key, std::int64_t tokens,
                               std::int64_t final_tokens) override;
  void commit_computed(std::int64_t sequence, std::int64_t computed_tokens) override;

  KvUsage usage(std::int64_t next_final_tokens) const override;
  std::int64_t capacity_tokens() const override { return pool_.total() * slot_tokens_; }
  std::int64_t sequences() const override { return static_cast<std::int64_t>(tables_.size()); }

  const KvPoolLayout& layout() const { return layout_; }
  std::int64_t total_blocks() const { return pool_.total(); }
  std::int64_t free_blocks() const { return pool_.free(); }
  // Holders beyond the first of the blocks prefix hits share, summed over blocks.
  std::int64_t extra_holders() const { return pool_.extra_holders(); }
  // Blocks the sequences hold in group `group` (a layout index), all together (a shared block
  // once per holder).
  std::int64_t group_blocks(std::size_t group) const { return group_blocks_.at(group); }
  // The live blocks one sequence holds in a group, in logical order (those freed behind a
  // window are gone).
  const std::vector<std::int32_t>& block_table(std::int64_t sequence, std::size_t group) const;

 private:
  static constexpr char kName[] = "hybrid paged allocator";
  struct GroupTable {
    std::vector<std::int32_t> blocks;  // live blocks, in logical order
    std::int64_t skipped = 0;          // leading blocks freed (vLLM's null blocks)
  };
  struct Table {
    std::int64_t tokens = 0;
    std::vector<GroupTable> groups;
    // Grows of one token ahead that free and take no block in any group, and the token
    // slots each adds to the states (settle_quiet): such a grow only counts.
    std::int64_t quiet_grows = 0;
    std::int64_t states_per_token = 0;
    // Prefix caching: its content's block identities (empty: none are named), and the leading
    // blocks named or offered a name in every group.
    std::span<const std::uint64_t> hashes;
    std::int64_t committed_blocks = 0;
  };

  // Blocks freed and blocks taken if `t` grew by `tokens` now.
  struct Change {
    std::int64_t freed = 0;
    std::int64_t taken = 0;
  };
  Change change_of(const Table& t, std::int64_t tokens) const;
  bool fits(const Table& t, std::int64_t tokens) const {
    const Change c = change_of(t, tokens);
    return c.taken <= pool_.free() + c.freed;
  }
  // Frees what lies outside the windows, then takes blocks for `tokens` more.
  void free_skipped(Table& t);
  // Sets t.quiet_grows and t.states_per_token for the table as it now is.
  void settle_quiet(Table& t) const;
  void take(Table& t, std::int64_t tokens);
  // The token slots holding state in a table.
  std::int64_t states_of(const Table& t) const;
  const Table& table(std::int64_t sequence) const;
  Table& table(std::int64_t sequence) {
    return const_cast<Table&>(static_cast<const HybridPagedAllocator&>(*this).table(sequence));
  }
  void check_conservation() const;
  // Prefix caching: the identity of block `index` of group `group` of `key`'s sequence, and
  // the blocks of the longest hit (at most `max_blocks`, leaving the last token computed).
  static std::uint64_t identity(std::int64_t sequence, std::span<const std::uint64_t> hashes,
                                std::int64_t index, std::size_t group);
  std::int64_t hit_blocks(const PrefixKey& key, std::int64_t max_blocks) const;
  // The first block of group `group` a hit of `hits` blocks shares (earlier ones skipped).
  std::int64_t first_shared(std::size_t group, std::int64_t hits) const;
  std::int64_t physical_states() const {
    return token_states_ - pool_.extra_holders() * slot_tokens_;
  }

  KvPoolLayout layout_;
  bool caching_;
  std::int64_t slot_tokens_;
  // Every attention group's block holds slot_tokens_ tokens, so a token held adds exactly one
  // slot of state in each: the condition of quiet grows.
  bool uniform_blocks_;
  BlockPool pool_;
  BlockWatermark watermark_;
  SequenceTable<Table> tables_;
  std::vector<std::int64_t> group_blocks_;
  std::int64_t token_states_ = 0;
};

}  // namespace servesim
