#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/memory/impl/block_hash_index.h"
#include "sim/memory/impl/host_block_cache.h"
#include "sim/memory/kv_cache_allocator.h"

namespace servesim {

// The physical blocks of a paged KV cache: which are free and how many are used. Knows
// nothing about sequences.
//
// Two orders, fixed at construction. Without prefix caching the free blocks form a stack
// whose top is taken first (a fresh pool hands out 0, 1, 2, ...); freed blocks go back on
// top, a table's last block first. With prefix caching they form vLLM V1's free queue
// (block_pool.py, FreeKVCacheBlockQueue): blocks are taken from its front, freed blocks join
// its back, a table's last block first (so that a sequence's tail is evicted before its
// head), and a block hit while free leaves it from wherever it is. Blocks then carry
// reference counts (the sequences holding them) and, once computed, a content hash: a block
// freed by its last holder keeps its hash and can be hit until it is taken again, which
// evicts it. A hash names at most one block.
//
// Until the first block is named, every free block is anonymous and any order of them is
// as good as vLLM's (which one a sequence takes shows in no hit and no eviction), so a pool
// with prefix caching keeps the stack until then and turns it into the queue, the next block
// to take at its front, when it names its first block: a workload whose requests carry no
// content (nothing is ever named) pays nothing for prefix caching.
//
// An owner that never reads a block's id before the first name (PagedAllocator) may make
// the pool anonymous: until then it counts blocks and hands out no ids (take and count_taken
// give none; give_back_anonymous returns a count), so a block table is a count and taking or
// returning blocks costs O(1) however many. At the first name the owner gives every held
// block an id (identify): which ids, and in which order the free ones queue, shows in no hit
// and no eviction while no block is named, so the run is the one ids from the start give.
//
// Decode rounds may count blocks as taken before they are handed to tables (count_taken),
// so that a run of rounds can hand them out table by table in one pass (see
// DecodeCohort::hand_out); drop_counted then forgets them.
class BlockPool {
 public:
  // Throws InfeasibleError for fewer than one block or more than 2^31 (block ids are 32-bit).
  // `host_cache_blocks` > 0: evicted named blocks go to a host tier of that many blocks.
  // `anonymous`: no ids until identify (above).
  explicit BlockPool(std::int64_t total_blocks, bool prefix_caching = false,
                     std::int64_t host_cache_blocks = 0, bool anonymous = false);

  std::int64_t total() const { return total_; }
  // Blocks no sequence holds (cached ones included: they are free for allocation).
  std::int64_t free() const { return free_; }
  std::int64_t used() const { return total_ - free_; }
  bool prefix_caching() const { return caching_; }
  // The pool as a KvUsage in token slots, `block_tokens` to a block, `token_states` of them
  // holding tokens: the rest of the used blocks is internal fragmentation, then the cached
  // and the free blocks. Any free block serves any request: no external fragmentation.
  KvUsage usage(std::int64_t block_tokens, std::int64_t token_states) const {
    KvUsage u;
    u.capacity_tokens = total_ * block_tokens;
    u.token_states = token_states;
    u.internal_fragmentation = used() * block_tokens - token_states;
    u.cached = cached_free() * block_tokens;
    u.free = free_ * block_tokens - u.cached;
    return u;
  }
  // Whether the free blocks are in the queue (prefix caching, once a block was named).
  bool queued() const { return queue_; }
  // Whether blocks are counted without ids (an anonymous pool before identify).
  bool anonymous() const { return anonymous_; }

  // Takes `count` free blocks onto the end of `blocks`, in the order they leave the pool
  // (evicting cached ones); an anonymous pool only counts them. The caller has checked that
  // they are free.
  void take(std::int64_t count, std::vector<std::int32_t>& blocks) {
    if (anonymous_) {
      // nothing to hand out but the count
    } else if (queue_) {
      for (std::int64_t i = 0; i < count; ++i)
        blocks.push_back(pop_front());
    } else {
      for (std::int64_t i = 0; i < count; ++i) {
        blocks.push_back(free_list_.back());
        free_list_.pop_back();
      }
    }
    free_ -= count;
  }
  // Returns the blocks of a table (all of them, in logical order): each loses a holder, and
  // those with none left are free again (with prefix caching, cached if they have a hash).
  void give_back(std::span<const std::int32_t> blocks);
  // An anonymous pool's give_back: `count` blocks are free again.
  void give_back_anonymous(std::int64_t count) {
    if (!anonymous_ || count < 0 || count > used()) anonymous_misused();
    free_ += count;
  }
  // An anonymous pool gets ids: blocks 0 .. held - 1 are held (the owner gives them to its
  // tables), the others are free, and the pool goes on as one with ids would. Prefix caching
  // queues the free ones, lowest id first.
  void identify(std::int64_t held);

  // Counts `count` blocks as taken, to be handed out by the caller (DecodeCohort::hand_out)
  // before drop_counted: on the free stack they stay on it (the k-th counted since the last
  // drop_counted is free_list()[size - 1 - k]); from the queue they leave now, the k-th
  // counted being counted_blocks()[k].
  void count_taken(std::int64_t count) {
    if (anonymous_) {
      // nothing to hand out but the count
    } else if (queue_) {
      for (std::int64_t i = 0; i < count; ++i)
        counted_blocks_.push_back(pop_front());
    } else {
      counted_ += count;
    }
    free_ -= count;
  }
  std::span<const std::int32_t> free_list() const { return free_list_; }
  std::span<const std::int32_t> counted_blocks() const { return counted_blocks_; }
  void drop_counted();

  // Prefix caching only. The block holding `hash`, or -1.
  std::int32_t find(std::uint64_t hash) const { return cached_ ? cached_->find(hash) : -1; }
  // Whether no sequence holds the block (a hit on it takes it out of the free queue).
  bool is_free(std::int32_t block) const { return ref_[static_cast<std::size_t>(block)] == 0; }
  // A sequence hit the block: one more holder, out of the free queue if it was free.
  void share(std::int32_t block);
  // The block's tokens are computed: it is named by `hash` unless another block already is
  // (then it stays anonymous, and is not registered twice). Whether it was registered.
  bool name(std::int32_t block, std::uint64_t hash);
  // The host tier (nullptr without one).
  HostBlockCache* host() { return host_ ? &*host_ : nullptr; }
  const HostBlockCache* host() const { return host_ ? &*host_ : nullptr; }
  // Free blocks holding a hash (evictable, hittable).
  std::int64_t cached_free() const { return cached_free_; }
  // Holders beyond the first, summed over blocks: the slots counted once per holder that
  // hold one token state.
  std::int64_t extra_holders() const { return extra_holders_; }

  // used + free == total, the free order holds exactly the free blocks, and (with prefix
  // caching) the cached free blocks are among them.
  bool conserved() const {
    if (anonymous_) return free_ >= 0 && free_ <= total_;
    if (queue_) {
      return free_ >= 0 && queued_ == free_ && cached_free_ >= 0 && cached_free_ <= free_ &&
             extra_holders_ >= 0;
    }
    return free_ >= 0 && static_cast<std::int64_t>(free_list_.size()) - counted_ == free_;
  }

 private:
  std::int32_t pop_front();
  // The stack becomes the queue: the block the stack would give next is at its front.
  void form_queue();
  // The free stack holds blocks first .. total - 1, the lowest on top.
  void stack_free_from(std::int64_t first);
  void push_back(std::int32_t block);
  void unlink(std::int32_t block);
  [[noreturn, gnu::cold]] void anonymous_misused() const;

  std::int64_t total_;
  std::int64_t free_;
  bool caching_;
  bool queue_ = false;
  bool anonymous_;
  // The free stack (without prefix caching, and with it until a block is named).
  std::int64_t counted_ = 0;             // counted by decode rounds, still on the free list
  std::vector<std::int32_t> free_list_;  // free block ids; taken from the back
  // The free queue (prefix caching, from the first name on): a doubly linked list through the
  // blocks whose sentinel is block `total_` (next_[sentinel] is the front).
  std::vector<std::int32_t> next_;
  std::vector<std::int32_t> prev_;
  std::int64_t queued_ = 0;
  std::vector<std::int32_t> counted_blocks_;
  std::vector<std::int32_t> ref_;         // holders per block
  std::vector<std::uint64_t> hash_;       // a named block's hash
  std::vector<std::uint8_t> named_;       // whether the block is named
  std::optional<BlockHashIndex> cached_;  // hash -> block, from the first name on
  std::int64_t cached_free_ = 0;
  std::int64_t extra_holders_ = 0;
  std::optional<HostBlockCache> host_;
};

}  // namespace servesim
