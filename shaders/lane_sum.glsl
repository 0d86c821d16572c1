// The sum over the 8 lanes that serve one attention work item (aligned groups of 8 within
// the subgroup), by a shuffle butterfly: no shared memory, no barriers. The including
// shader enables GL_KHR_shader_subgroup_shuffle.
#ifndef KVBENCH_LANE_SUM_GLSL
#define KVBENCH_LANE_SUM_GLSL

float lane_sum(float x) {
  x += subgroupShuffleXor(x, 4u);
  x += subgroupShuffleXor(x, 2u);
  x += subgroupShuffleXor(x, 1u);
  return x;
}

#endif
