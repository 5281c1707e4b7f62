// A recording's samples written as a timeline (time_order.h).

#include "collapse/time_order.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <unordered_map>

#include "stacks/folded.h"

namespace pf {

namespace {

// The folded text of each leaf's stack after the filters, once per leaf; -1: filtered out.
class LeafText {
 public:
  LeafText(const StackTree& tree, const StackFilterOptions& f)
      : tree_(tree),
        include_(f.include, "--include"),
        exclude_(f.exclude, "--exclude"),
        hide_(f.hide, "--hide") {}

  int64_t Of(NodeId leaf) {
    auto [it, fresh] = index_.try_emplace(leaf.value, -1);
    if (!fresh) return it->second;
    frames_.clear();
    for (NodeId n = leaf; n != StackTree::kRoot; n = tree_.parent(n)) frames_.push_back(n);
    std::string text;
    for (size_t i = frames_.size(); i-- > 0;) {
      if (i + 1 < frames_.size()) text += ';';
      text += tree_.name(frames_[i]);
    }
    if ((!include_.empty() && !include_.Matches(text)) || exclude_.Matches(text)) return -1;
    if (!hide_.empty()) {  // the frames named so go; their weight stays with the caller
      text.clear();
      for (size_t i = frames_.size(); i-- > 0;) {
        std::string_view name = tree_.name(frames_[i]);
        if (hide_.Matches(name)) continue;
        if (!text.empty()) text += ';';
        text += name;
      }
      if (text.empty()) return -1;
    }
    it->second = static_cast<int64_t>(texts_.size());
    texts_.push_back(std::move(text));
    return it->second;
  }
  const std::string& Text(int64_t i) const { return texts_[static_cast<size_t>(i)]; }

 private:
  const StackTree& tree_;
  PatternList include_, exclude_, hide_;
  std::unordered_map<uint32_t, int64_t> index_;
  std::vector<std::string> texts_;
  std::vector<NodeId> frames_;
};

}  // namespace

void WriteTimeOrdered(const StackTree& tree, const std::vector<TimedSample>& samples,
                      const StackFilterOptions& filter, BufferedWriter& out) {
  // Threads in the order of their first sample (then by id; CPUs by number), each one's
  // samples by time; the sort is stable, so samples of one time keep the recording's order.
  // Each sample's key is computed once.
  std::unordered_map<uint64_t, uint64_t> first;  // (pid, tid) -> its first sample's time
  auto thread = [](const TimedSample& s) { return uint64_t{s.pid} << 32 | s.tid; };
  for (const TimedSample& s : samples) {
    auto [it, fresh] = first.try_emplace(thread(s), s.time);
    if (!fresh) it->second = std::min(it->second, s.time);
  }
  struct Key {
    uint64_t first, thread, time;
    size_t index;
  };
  std::vector<Key> keys;
  keys.reserve(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const uint64_t t = thread(samples[i]);
    // (CPUs' lanes go by number.)
    keys.push_back({samples[i].pid == kCpuLane ? 0 : first[t], t, samples[i].time, i});
  }
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.first, a.thread, a.time) < std::tie(b.first, b.thread, b.time);
  });
  LeafText texts(tree, filter);
  if (!samples.empty()) out.Append(PfUnitLine(tree.unit()));
  int64_t run = -1;
  uint64_t run_weight = 0;
  std::string line;
  auto flush = [&] {
    if (run < 0) return;
    line = texts.Text(run);
    line += ' ';
    line += std::to_string(run_weight);
    line += '\n';
    out.Append(line);
  };
  for (const Key& k : keys) {
    const TimedSample& s = samples[k.index];
    const int64_t t = texts.Of(s.leaf);
    if (t < 0) continue;
    if (t == run) {
      run_weight = AddSat(run_weight, s.weight);
      continue;
    }
    flush();
    run = t;
    run_weight = s.weight;
  }
  flush();
}

}  // namespace pf
