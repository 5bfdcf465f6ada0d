#include "backends/residency_policy.h"

#include <algorithm>

#include "base/text.h"
#include "config/memory.h"

namespace swapd {
namespace {

// The dimensions of `total` over `budget`: "ram", "gpu0", ...
std::vector<std::string> Overflows(const MemoryAmount& budget, const Footprint& total) {
  std::vector<std::string> over;
  if (budget.ram && total.ram > *budget.ram) over.push_back("ram");
  for (const auto& [gpu, limit] : budget.vram) {
    auto used = total.vram.find(gpu);
    if (used != total.vram.end() && used->second > limit) {
      over.push_back("gpu" + std::to_string(gpu));
    }
  }
  return over;
}

// Whether freeing `cost` helps any of the overflowing dimensions.
bool Frees(const MemoryAmount& budget, const Footprint& total, const Footprint& cost) {
  if (budget.ram && total.ram > *budget.ram && cost.ram > 0) return true;
  for (const auto& [gpu, limit] : budget.vram) {
    auto used = total.vram.find(gpu);
    auto freed = cost.vram.find(gpu);
    if (used != total.vram.end() && used->second > limit && freed != cost.vram.end() &&
        freed->second > 0) {
      return true;
    }
  }
  return false;
}

MemoryAmount AsAmount(const Footprint& f) {
  MemoryAmount a;
  if (f.ram > 0) a.ram = f.ram;
  for (const auto& [gpu, bytes] : f.vram) {
    if (bytes > 0) a.vram[gpu] = bytes;
  }
  return a;
}

}  // namespace

Footprint& Footprint::operator+=(const Footprint& other) {
  ram += other.ram;
  for (const auto& [gpu, bytes] : other.vram) vram[gpu] += bytes;
  return *this;
}

Footprint& Footprint::operator-=(const Footprint& other) {
  ram -= std::min(ram, other.ram);
  for (const auto& [gpu, bytes] : other.vram) {
    uint64_t& mine = vram[gpu];
    mine -= std::min(mine, bytes);
  }
  return *this;
}

Footprint Larger(const Footprint& a, const Footprint& b) {
  Footprint out = a;
  out.ram = std::max(a.ram, b.ram);
  for (const auto& [gpu, bytes] : b.vram) out.vram[gpu] = std::max(out.vram[gpu], bytes);
  return out;
}

Footprint FootprintOf(const MemoryAmount& amount) {
  Footprint f;
  f.ram = amount.ram.value_or(0);
  f.vram = amount.vram;
  return f;
}

std::string DescribeProtection(const std::vector<ProtectedModel>& models) {
  auto why = [](const ProtectedModel& m) { return m.why.empty() ? "swappable: false" : m.why; };
  if (models.size() == 1) return "it is protected (" + why(models.front()) + ")";
  std::string out;
  for (const ProtectedModel& m : models) out += (out.empty() ? "" : "; ") + m.model + ": " + why(m);
  return "they are protected (" + out + ")";
}

bool ExceedsBudget(const MemoryAmount& budget, const Footprint& total) {
  return !Overflows(budget, total).empty();
}

BudgetDecision FitToBudget(const MemoryAmount& budget, const std::string& model,
                           const Footprint& need, const std::vector<ResidentModel>& resident) {
  BudgetDecision d;
  if (std::vector<std::string> over = Overflows(budget, need); !over.empty()) {
    d.verdict = BudgetDecision::Verdict::kTooBig;
    d.why = ModelLabel(model) + " needs " + DescribeMemory(AsAmount(need)) +
            ", more than the memory budget (" + DescribeMemory(budget) + ") allows on " +
            Join(over);
    return d;
  }
  Footprint total = need;
  for (const ResidentModel& r : resident) total += r.cost;
  if (!ExceedsBudget(budget, total)) return d;

  std::vector<const ResidentModel*> order;
  for (const ResidentModel& r : resident) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const ResidentModel* a, const ResidentModel* b) {
    if (a->evict_cost != b->evict_cost) return a->evict_cost < b->evict_cost;
    if (a->last_used != b->last_used) return a->last_used < b->last_used;
    return a->model < b->model;
  });
  const std::vector<std::string> over_before = Overflows(budget, total);
  std::vector<const ResidentModel*> victims;
  for (const ResidentModel* r : order) {
    if (!ExceedsBudget(budget, total)) break;
    if (r->protect || !Frees(budget, total, r->cost)) continue;
    victims.push_back(r);
    total -= r->cost;
  }
  if (ExceedsBudget(budget, total)) {
    d.verdict = BudgetDecision::Verdict::kProtected;
    std::vector<ProtectedModel> reasons;
    for (const ResidentModel* r : order) {
      if (r->protect && Frees(budget, total, r->cost)) {
        d.protected_models.push_back(r->model);
        reasons.push_back({r->model, r->protected_by});
      }
    }
    d.why = "it needs " + DescribeMemory(AsAmount(need)) + ", which fits the memory budget (" +
            DescribeMemory(budget) + ") only if " + Join(d.protected_models) + " stop" +
            (d.protected_models.size() == 1 ? "s" : "") + ", and " + DescribeProtection(reasons);
    return d;
  }
  // Keep any victim the others already make room for (the most recent choices first).
  for (auto it = victims.rbegin(); it != victims.rend();) {
    Footprint with = total;
    with += (*it)->cost;
    if (!ExceedsBudget(budget, with)) {
      total = with;
      it = decltype(it)(victims.erase(std::next(it).base()));
    } else {
      ++it;
    }
  }
  d.verdict = BudgetDecision::Verdict::kEvict;
  for (const ResidentModel* r : victims) d.evict.push_back(r->model);
  d.why = "budget: " + ModelLabel(model) + " (" + DescribeMemory(AsAmount(need)) +
          ") beside the running models exceeds the memory budget (" + DescribeMemory(budget) +
          ") on " + Join(over_before) + "; evict [" + Join(d.evict) + "]";
  return d;
}

}  // namespace swapd
