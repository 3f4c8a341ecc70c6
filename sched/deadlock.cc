// Builds the rendezvous wait graph of a schedule and finds a cycle with a Boost.Graph
// depth-first search (see deadlock.h).
#include "sched/deadlock.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/property_map/property_map.hpp>

#include "sched/dependencies.h"

namespace pipeworks::sched {
namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

// Records the DFS tree and the first back edge; a back edge u -> v closes the cycle
// v -> ... -> u -> v along the tree.
class CycleRecorder : public boost::default_dfs_visitor {
 public:
  CycleRecorder(std::vector<Vertex>* parent, std::optional<std::pair<Vertex, Vertex>>* back_edge)
      : parent_(parent), back_edge_(back_edge) {}
  void tree_edge(Edge e, const Graph& g) const { (*parent_)[boost::target(e, g)] = boost::source(e, g); }
  void back_edge(Edge e, const Graph& g) const {
    if (!back_edge_->has_value()) *back_edge_ = std::make_pair(boost::source(e, g), boost::target(e, g));
  }

 private:
  std::vector<Vertex>* parent_;
  std::optional<std::pair<Vertex, Vertex>>* back_edge_;
};

// The graph's nodes: the action at (device, position) is offset[device] + position, and node[that]
// is the vertex it stands on: its own, or for a RECV whose SEND exists the SEND's.
struct ActionNodes {
  std::vector<std::size_t> offset;  // per device, and one past the last
  std::vector<Vertex> node;
  std::size_t flat(const Location& l) const {
    return offset[static_cast<std::size_t>(l.device)] + static_cast<std::size_t>(l.position);
  }
  Location location(Vertex v) const {
    const auto d = static_cast<std::size_t>(std::upper_bound(offset.begin(), offset.end(), v) - offset.begin() - 1);
    return Location{static_cast<int>(d), static_cast<int>(v - offset[d])};
  }
};

ActionNodes action_nodes(const Schedule& schedule, const ActionIndex& index) {
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  ActionNodes nodes;
  nodes.offset.assign(num_devices + 1, 0);
  for (std::size_t d = 0; d < num_devices; ++d) nodes.offset[d + 1] = nodes.offset[d] + schedule.programs[d].size();
  nodes.node.resize(nodes.offset[num_devices]);
  for (std::size_t d = 0; d < num_devices; ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      nodes.node[nodes.offset[d] + p] = nodes.offset[d] + p;
      if (!is_recv(program[p].kind)) continue;
      if (auto peer = comm_peer(program[p], schedule.num_stages)) {
        if (auto at = index.find(*peer)) nodes.node[nodes.offset[d] + p] = nodes.flat(*at);
      }
    }
  }
  return nodes;
}

// An edge from each action's predecessor on its device and from each of its data dependencies.
Graph dependency_graph(const Schedule& schedule, const ActionIndex& index, const ActionNodes& nodes) {
  std::vector<std::pair<Vertex, Vertex>> edges;
  edges.reserve(nodes.node.size() * 2);
  auto add_edge = [&](Vertex from, Vertex to) {
    if (from != to) edges.emplace_back(from, to);
  };
  for (std::size_t d = 0; d + 1 < nodes.offset.size(); ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Vertex here = nodes.node[nodes.offset[d] + p];
      if (p > 0) add_edge(nodes.node[nodes.offset[d] + p - 1], here);
      for (const Action& dep : data_dependencies(program[p], index, schedule.num_stages)) {
        if (auto at = index.find(dep)) add_edge(nodes.node[nodes.flat(*at)], here);
      }
    }
  }
  return Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), nodes.node.size());
}

// The vertices of the first cycle a depth-first search meets, in the order of its edges; empty
// when the graph has none.
std::vector<Vertex> first_cycle(const Graph& graph, std::size_t num_nodes) {
  std::vector<Vertex> parent(num_nodes);
  std::vector<boost::default_color_type> color(num_nodes);
  std::optional<std::pair<Vertex, Vertex>> back;
  boost::depth_first_search(
      graph, boost::visitor(CycleRecorder(&parent, &back))
                 .color_map(boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, graph))));
  if (!back) return {};
  std::vector<Vertex> cycle;
  for (Vertex v = back->first; v != back->second; v = parent[v]) cycle.push_back(v);
  cycle.push_back(back->second);
  std::reverse(cycle.begin(), cycle.end());
  return cycle;
}

}  // namespace

std::vector<CycleStep> deadlock_cycle(const Schedule& schedule, const ActionIndex& index) {
  const ActionNodes nodes = action_nodes(schedule, index);
  const std::vector<Vertex> cycle = first_cycle(dependency_graph(schedule, index, nodes), nodes.node.size());
  std::vector<CycleStep> steps;
  steps.reserve(cycle.size());
  for (Vertex v : cycle) {
    CycleStep step{nodes.location(v), std::nullopt};
    const Action& a = schedule.programs[static_cast<std::size_t>(step.at.device)][static_cast<std::size_t>(step.at.position)];
    if (auto peer = comm_peer(a, schedule.num_stages); peer && is_send(a.kind)) step.peer = index.find(*peer);
    steps.push_back(step);
  }
  return steps;
}

}  // namespace pipeworks::sched
