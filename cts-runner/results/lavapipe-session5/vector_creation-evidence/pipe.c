/* Creates a compute pipeline from a SPIR-V file (two storage buffers, bindings 0 and 1) and
   dispatches it once; prints the time of pipeline creation plus that first dispatch (lavapipe
   compiles the shader to machine code at its first use). Evidence harness for vkcl's CTS notes: plain Vulkan,
   no vkcl involved. Usage: pipe shader.spv [device-name-substring] [push|args]: with push or args the shader takes
   buffer device addresses: two in push constants (push), or one pointing at the two (args). */
#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define CK(x) do{VkResult r_=(x); if(r_){fprintf(stderr,"%s = %d\n",#x,r_);return 1;}}while(0)
int main(int argc,char**argv){
  FILE*f=fopen(argv[1],"rb"); if(!f){perror(argv[1]);return 1;} fseek(f,0,SEEK_END); long n=ftell(f); rewind(f);
  unsigned*code=malloc(n); if(fread(code,1,n,f)!=(size_t)n) return 1; fclose(f);
  VkApplicationInfo app={VK_STRUCTURE_TYPE_APPLICATION_INFO,0,"pipe",0,0,0,VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici={VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,0,0,&app};
  VkInstance inst; CK(vkCreateInstance(&ici,0,&inst));
  uint32_t nd=8; VkPhysicalDevice pds[8]; CK(vkEnumeratePhysicalDevices(inst,&nd,pds));
  VkPhysicalDevice pd=pds[0];
  for(uint32_t i=0;i<nd;i++){VkPhysicalDeviceProperties p;vkGetPhysicalDeviceProperties(pds[i],&p);
    if(argc>2&&strstr(p.deviceName,argv[2])) pd=pds[i];}
  VkPhysicalDeviceProperties props; vkGetPhysicalDeviceProperties(pd,&props);
  float prio=1; VkDeviceQueueCreateInfo qci={VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,0,0,0,1,&prio};
  VkPhysicalDeviceVulkan12Features f12={VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.storageBuffer8BitAccess=1; f12.shaderInt8=1; f12.bufferDeviceAddress=1;
  const char*mode=argc>3?argv[3]:"";
  VkPhysicalDeviceFeatures2 f2={VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,&f12};
  VkDeviceCreateInfo dci={VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,&f2,0,1,&qci};
  VkDevice dev; CK(vkCreateDevice(pd,&dci,0,&dev));
  VkDescriptorSetLayoutBinding b[2]={{0,VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,1,VK_SHADER_STAGE_COMPUTE_BIT},{1,VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,1,VK_SHADER_STAGE_COMPUTE_BIT}};
  VkDescriptorSetLayoutCreateInfo dl={VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,0,0,2,b};
  VkDescriptorSetLayout dsl; CK(vkCreateDescriptorSetLayout(dev,&dl,0,&dsl));
  VkPushConstantRange pcr={VK_SHADER_STAGE_COMPUTE_BIT,0,16};
  VkPipelineLayoutCreateInfo pl={VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,0,0,1,&dsl,1,&pcr};
  VkPipelineLayout layout; CK(vkCreatePipelineLayout(dev,&pl,0,&layout));
  VkShaderModuleCreateInfo sm={VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,0,0,(size_t)n,code};
  VkShaderModule mod; CK(vkCreateShaderModule(dev,&sm,0,&mod));
  VkComputePipelineCreateInfo cp={VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,0,0,
    {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,0,0,VK_SHADER_STAGE_COMPUTE_BIT,mod,"main"},layout};
  double t0=now(); VkPipeline pipe; CK(vkCreateComputePipelines(dev,VK_NULL_HANDLE,1,&cp,0,&pipe));
  VkBuffer buf[2]; VkDeviceMemory mem[2];
  for(int i=0;i<2;i++){
    VkBufferCreateInfo bi={VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,0,0,1<<20,VK_BUFFER_USAGE_STORAGE_BUFFER_BIT|VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT};
    CK(vkCreateBuffer(dev,&bi,0,&buf[i])); VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev,buf[i],&mr);
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd,&mp); uint32_t t=0;
    while(!(mr.memoryTypeBits&(1u<<t)) || !(mp.memoryTypes[t].propertyFlags&VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) t++;
    VkMemoryAllocateFlagsInfo fi={VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,0,VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
    VkMemoryAllocateInfo ai={VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,&fi,mr.size,t};
    CK(vkAllocateMemory(dev,&ai,0,&mem[i])); CK(vkBindBufferMemory(dev,buf[i],mem[i],0));}
  VkDescriptorPoolSize ps={VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,2};
  VkDescriptorPoolCreateInfo dpi={VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,0,0,1,1,&ps};
  VkDescriptorPool pool; CK(vkCreateDescriptorPool(dev,&dpi,0,&pool));
  VkDescriptorSetAllocateInfo dsa={VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,0,pool,1,&dsl};
  VkDescriptorSet set; CK(vkAllocateDescriptorSets(dev,&dsa,&set));
  VkDescriptorBufferInfo dbi[2]={{buf[0],0,VK_WHOLE_SIZE},{buf[1],0,VK_WHOLE_SIZE}};
  VkWriteDescriptorSet wr={VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,0,set,0,0,2,VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,0,dbi};
  vkUpdateDescriptorSets(dev,1,&wr,0,0);
  VkCommandPoolCreateInfo cpi={VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,0,0,0};
  VkCommandPool cpool; CK(vkCreateCommandPool(dev,&cpi,0,&cpool));
  VkCommandBufferAllocateInfo cba={VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,0,cpool,VK_COMMAND_BUFFER_LEVEL_PRIMARY,1};
  VkCommandBuffer cb; CK(vkAllocateCommandBuffers(dev,&cba,&cb));
  VkCommandBufferBeginInfo cbb={VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  CK(vkBeginCommandBuffer(cb,&cbb)); vkCmdBindPipeline(cb,VK_PIPELINE_BIND_POINT_COMPUTE,pipe);
  VkBufferDeviceAddressInfo ba0={VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,0,buf[0]},ba1=ba0; ba1.buffer=buf[1];
  uint64_t addr[2]={vkGetBufferDeviceAddress(dev,&ba0),vkGetBufferDeviceAddress(dev,&ba1)};
  if(!strcmp(mode,"args")){ uint64_t*m; CK(vkMapMemory(dev,mem[0],0,VK_WHOLE_SIZE,0,(void**)&m));
    m[0]=addr[0]+4096; m[1]=addr[1]; vkUnmapMemory(dev,mem[0]); }
  vkCmdPushConstants(cb,layout,VK_SHADER_STAGE_COMPUTE_BIT,0,16,addr);
  vkCmdBindDescriptorSets(cb,VK_PIPELINE_BIND_POINT_COMPUTE,layout,0,1,&set,0,0); vkCmdDispatch(cb,1,1,1);
  CK(vkEndCommandBuffer(cb)); VkQueue q; vkGetDeviceQueue(dev,0,0,&q);
  VkSubmitInfo si={VK_STRUCTURE_TYPE_SUBMIT_INFO,0,0,0,0,1,&cb}; CK(vkQueueSubmit(q,1,&si,VK_NULL_HANDLE));
  CK(vkQueueWaitIdle(q));
  printf("%s: %s: pipeline and first dispatch %.2f s\n",props.deviceName,argv[1],now()-t0);
  return 0;}
