// The linear index of this invocation in a 2-D grid of 64-invocation workgroups: dispatches
// past Vulkan's guaranteed 65535 groups per dimension are laid out as rows of at most 65535
// groups (src/vk/kernel.hpp `grid_layout`, Batch::dispatch_groups); the surplus of the last row lies
// past the work and returns early. grid_invocation() is for shaders that declare
// local_size_x = 64; grid_workgroup() for any workgroup size.
#ifndef KVBENCH_GRID_GLSL
#define KVBENCH_GRID_GLSL

uint grid_workgroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
uint grid_invocation() { return grid_workgroup() * 64u + gl_LocalInvocationID.x; }

#endif
