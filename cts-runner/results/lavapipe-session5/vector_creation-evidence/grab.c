#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static int n;
cl_program clCreateProgramWithSource(cl_context c, cl_uint k, const char **s, const size_t *l, cl_int *e){
  static cl_program (*real)(cl_context,cl_uint,const char**,const size_t*,cl_int*);
  if(!real) real=dlsym(RTLD_NEXT,"clCreateProgramWithSource");
  char name[64]; snprintf(name,64,"/tmp/vc/grab/p%04d.cl",n++); FILE*f=fopen(name,"w");
  for(cl_uint i=0;i<k;i++){ if(l&&l[i]) fwrite(s[i],1,l[i],f); else fputs(s[i],f);} fclose(f);
  if(n>=200) { fprintf(stderr,"grabbed\n"); exit(0);} 
  return real(c,k,s,l,e);}
