(function(){
'use strict';
var svg=document.getElementById('tl'), plot=document.getElementById('plot');
if(!svg||!plot) return;
document.body.classList.add('js-on');
document.querySelectorAll('.js').forEach(function(e){e.hidden=false;});
var NS='http://www.w3.org/2000/svg';
var LEFT=+svg.dataset.left, END=+svg.dataset.end, TOP=+svg.dataset.top, W=+svg.dataset.width;
var STEPS=[1e3,2e3,5e3,1e4,2e4,5e4,1e5,2e5,5e5,1e6,2e6,5e6,1e7,2e7,5e7,1e8,2e8,5e8,1e9,2e9,5e9,1e10,2e10,3e10,6e10,
  1.2e11,3e11,6e11,1.2e12,1.8e12,3.6e12,7.2e12,1.08e13,2.16e13,4.32e13,8.64e13];
var MIN_SPAN=2000;
var view={a:0,b:END};
var marks=[], spans=[], bands=[], cxs=[], lanes=[];
document.querySelectorAll('#lanes > g.lane').forEach(function(g,i){
  lanes.push({g:g,bg:document.getElementById('bg-'+i),collapsed:g.classList.contains('collapsed'),y:0});
  g.dataset.i=i;
});
function laneOf(el){ var g=el.closest('g.lane'); return g?lanes[+g.dataset.i]:null; }
// Labels live in their own layer above the lanes (#labels), one g.lw per
// labelled mark, placed at the mark: data-m names it.
var lws={};
document.querySelectorAll('#labels > g.lw').forEach(function(w){ lws[w.dataset.m]=w; });
document.querySelectorAll('#lanes [data-t]').forEach(function(el){
  var w=lws[el.id]||null, l=w?w.firstElementChild:null;
  var first=el.firstElementChild;
  marks.push({el:el,t:+el.dataset.t,y:+el.dataset.y,p:+el.dataset.p,lbl:l,lw:w,bb:null,lane:laneOf(el),shown:true,
              shape:!!first&&first.tagName!=='text'&&first.tagName!=='title'});
});
document.querySelectorAll('#lanes [data-t0]').forEach(function(el){
  spans.push({el:el,t0:+el.dataset.t0,t1:+el.dataset.t1});
});
document.querySelectorAll('#lanes g.band').forEach(function(el){ bands.push({el:el,w:+el.dataset.w}); });
document.querySelectorAll('#cxs g.counterexample').forEach(function(el){
  cxs.push({el:el,t:+el.dataset.t,line:el.querySelector('line'),txt:el.querySelector('text')});
});
var byId={}; marks.concat(spans).forEach(function(m){ byId[m.el.id]=m; });
// Label boxes do not change with zoom: measure each once, in its mark's coordinates.
svg.querySelectorAll('.lbl.thin').forEach(function(l){ l.classList.remove('thin'); });
marks.forEach(function(m){ if(m.lbl){ m.dx=Math.abs(+m.lbl.getAttribute('x'));
  m.dy=m.lw.dataset.dy!==undefined? +m.lw.dataset.dy : +m.lbl.getAttribute('y');
  m.lbl.setAttribute('x',m.dx); m.lbl.setAttribute('y',m.dy); m.lbl.removeAttribute('text-anchor'); m.pos=0; } });
marks.forEach(function(m){ if(m.lbl){ var b=m.lbl.getBBox(); m.bb={x:b.x,y:b.y,w:b.width,h:b.height}; } });
// A label's places around its mark, as report/timeline.cpp's label_shift:
// right, left, below right, below left, above right, above left.
var SHIFT=[0,0,18,18,-18,-18];
function side(m,i){ if(m.pos===i) return; m.pos=i; var left=i%2===1;
  m.lbl.setAttribute('x',left?-m.dx:m.dx); m.lbl.setAttribute('y',m.dy+SHIFT[i]);
  if(left) m.lbl.setAttribute('text-anchor','end'); else m.lbl.removeAttribute('text-anchor'); }
function X(t){ return LEFT+(t-view.a)*W/(view.b-view.a); }
function fmtTick(t,step){
  var MIN=6e10;
  if(step>=MIN && step%MIN===0){ var m=Math.round(t/MIN);
    if(m>=60) return Math.floor(m/60)+'h'+(m%60? String(m%60).padStart(2,'0')+'m':'');
    return m+'m'; }
  var dec=0,p=1e9; while(step%p!==0){ p/=10; dec++; }
  return (t/1e9).toFixed(dec)+'s';
}
function fmtTime(t){ var s=view.b-view.a; return (t/1e9).toFixed(s<1e7?6:s<1e10?3:1)+'s'; }
var axisY=0;
function layout(){
  var y=TOP;
  lanes.forEach(function(l){
    var h=l.collapsed?16:46; l.y=y;
    l.g.setAttribute('transform','translate(0,'+y+')');
    l.g.classList.toggle('collapsed',l.collapsed);
    l.bg.setAttribute('y',y); l.bg.setAttribute('height',h); l.bg.setAttribute('width',W);
    y+=h;
  });
  axisY=y;
  var clip=document.getElementById('cliprect'); clip.setAttribute('width',W);
  svg.setAttribute('width',LEFT+W+30); svg.setAttribute('height',axisY+50);
  cxs.forEach(function(c){ c.line.setAttribute('y2',axisY); });
  document.getElementById('caption').setAttribute('y',axisY+42);
}
function axis(){
  var g=document.getElementById('axis'), grid=document.getElementById('grid');
  g.textContent=''; grid.textContent='';
  var span=view.b-view.a, maxTicks=Math.max(2,Math.floor(W/90)), step=STEPS[STEPS.length-1];
  for(var i=0;i<STEPS.length;i++){ if(span/STEPS[i]<=maxTicks){ step=STEPS[i]; break; } }
  for(var t=Math.ceil(view.a/step)*step; t<=view.b; t+=step){
    var x=X(t);
    var ln=document.createElementNS(NS,'line');
    ln.setAttribute('x1',x); ln.setAttribute('x2',x); ln.setAttribute('y1',TOP); ln.setAttribute('y2',axisY); ln.setAttribute('stroke','#ddd');
    grid.appendChild(ln);
    var tx=document.createElementNS(NS,'text');
    tx.setAttribute('x',x-10); tx.setAttribute('y',axisY+14); tx.setAttribute('class','axis tick');
    tx.textContent=fmtTick(t,step); g.appendChild(tx);
  }
  document.getElementById('range').textContent='showing '+fmtTime(view.a)+' – '+fmtTime(view.b)+' of '+fmtTime(END);
}
function place(){
  var lo=LEFT-400, hi=LEFT+W+20;
  marks.forEach(function(m){
    var x=X(m.t), show=x>=lo && x<=hi && !m.lane.collapsed;
    if(show!==m.shown){ m.el.style.display=show?'':'none'; if(m.lw) m.lw.style.display=show?'':'none'; m.shown=show; }
    m.x=x;
    if(show){ m.el.setAttribute('transform','translate('+x.toFixed(1)+','+m.y+')');
      if(m.lw) m.lw.setAttribute('transform','translate('+x.toFixed(1)+','+(m.lane.y+m.y)+')'); }
  });
  spans.forEach(function(s){
    var x0=Math.max(X(s.t0),LEFT-5), x1=Math.min(X(s.t1),LEFT+W+5);
    if(x1<LEFT-5||x0>LEFT+W+5){ s.el.style.display='none'; return; }
    s.el.style.display='';
    s.el.setAttribute('x',x0.toFixed(1)); s.el.setAttribute('width',Math.max(1,x1-x0).toFixed(1));
  });
  bands.forEach(function(b){
    var x0=X(0), k=(X(END)-x0)/b.w;
    b.el.setAttribute('transform','translate('+x0.toFixed(2)+',0) scale('+k.toFixed(6)+',1)');
  });
  cxs.forEach(function(c){
    var x=X(c.t), inside=x>=LEFT && x<=LEFT+W;
    c.el.style.display=inside?'':'none';
    c.el.setAttribute('transform','translate('+x.toFixed(1)+',0)');
    var right=x+c.txt.getComputedTextLength()+6>LEFT+W+30;
    c.txt.setAttribute('text-anchor',right?'end':'start'); c.txt.setAttribute('x',right?-3:3);
  });
}
// Show the labels that fit, most important first (a highlighted step's
// marks, rejections, grants, faults, writes, reads); hide the rest (shown on hover).
function thin(){
  var cand=[];
  marks.forEach(function(m){
    if(!m.lbl) return;
    var ok=m.shown && m.x>=LEFT && m.x<=LEFT+W;
    if(ok){ var y0=m.lane.y+m.y+m.bb.y-1, y1=y0+m.bb.h+2;
      var r0=m.x+m.bb.x-1, r1=m.x+m.bb.x+m.bb.w+1, l0=m.x-m.bb.x-m.bb.w-1, l1=m.x-m.bb.x+1;
      m.boxes=SHIFT.map(function(d,i){ return i%2? {x0:l0,y0:y0+d,x1:l1,y1:y1+d} : {x0:r0,y0:y0+d,x1:r1,y1:y1+d}; }); }
    if(ok) cand.push(m); else m.lbl.classList.add('thin');
  });
  cand.sort(function(a,b){ var ha=a.el.classList.contains('hl')?0:1, hb=b.el.classList.contains('hl')?0:1;
    return ha-hb || a.p-b.p || a.t-b.t; });
  var B=64, buckets={};
  function put(b){ for(var k=Math.floor(b.x0/B);k<=Math.floor(b.x1/B);k++) (buckets[k]=buckets[k]||[]).push(b); }
  // A label covers no mark but its own, whatever its priority (a rejection's
  // or a highlighted step's too): the shapes in view are obstacles.
  marks.forEach(function(m){
    if(!m.shape||!m.shown||m.x<LEFT-6||m.x>LEFT+W+6) return;
    var y=m.lane.y+m.y; put({x0:m.x-5.5,y0:y-6.5,x1:m.x+5.5,y1:y+6.5,o:m});
  });
  // The broken properties' names above the lanes: a label moved up a row from the first lane keeps off them.
  cxs.forEach(function(c){ if(c.el.style.display==='none') return;
    var x=X(c.t), b=c.txt.getBBox(); put({x0:x+b.x-1,y0:b.y-1,x1:x+b.x+b.width+1,y1:b.y+b.height+1}); });
  function free(b,m){
    if(b.x0<LEFT-2||b.x1>LEFT+W) return false;
    if(b.y1>axisY) return false;  // not moved below the lanes, onto the axis
    for(var k=Math.floor(b.x0/B);k<=Math.floor(b.x1/B);k++){ var L=buckets[k]; if(!L) continue;
      for(var j=0;j<L.length;j++){ var o=L[j]; if(o.o===m) continue; if(b.x0<o.x1&&o.x0<b.x1&&b.y0<o.y1&&o.y0<b.y1) return false; } }
    return true;
  }
  cand.forEach(function(m){
    // Right of the mark, else left, below right, below left, above right, above left; else hidden (shown on hover).
    var i=-1; for(var c=0;c<SHIFT.length&&i<0;c++) if(free(m.boxes[c],m)) i=c;
    m.lbl.classList.toggle('thin',i<0);
    if(i<0) return;
    side(m,i);
    put(m.boxes[i]);
  });
}
var pending=false;
function render(){ place(); axis(); thin(); }
function schedule(){ if(!pending){ pending=true; requestAnimationFrame(function(){ pending=false; render(); }); } }
function setView(a,b,now){
  var span=Math.min(END,Math.max(MIN_SPAN,b-a)), c=(a+b)/2;
  a=c-span/2; b=c+span/2;
  if(a<0){ b-=a; a=0; } if(b>END){ a-=b-END; b=END; } if(a<0) a=0;
  view.a=a; view.b=b; if(now) render(); else schedule();
}
function zoom(f,at){ if(at===undefined) at=(view.a+view.b)/2;
  setView(at-(at-view.a)*f, at+(view.b-at)*f); }
function pan(frac){ var d=(view.b-view.a)*frac; setView(view.a+d,view.b+d); }
function timeAt(clientX){ var r=svg.getBoundingClientRect(); return view.a+(clientX-r.left-LEFT)*(view.b-view.a)/W; }
var CXV=svg.dataset.v0!==undefined? [+svg.dataset.v0,+svg.dataset.v1] : null;
function whole(){ setView(0,END); }
function toCx(){ if(CXV) setView(CXV[0],CXV[1]); }
svg.addEventListener('wheel',function(e){
  e.preventDefault();
  var k=e.ctrlKey?0.01:0.0015, d=e.deltaMode===1?e.deltaY*16:e.deltaY;
  zoom(Math.exp(d*k), timeAt(e.clientX));
},{passive:false});
var ptrs={}, drag=null, moved=false;
svg.addEventListener('pointerdown',function(e){
  ptrs[e.pointerId]={x:e.clientX}; moved=false;
  var ids=Object.keys(ptrs);
  if(ids.length===1) drag={x:e.clientX,a:view.a,b:view.b};
  else if(ids.length===2){ var p=ptrs[ids[0]].x,q=ptrs[ids[1]].x; drag={pinch:Math.abs(p-q)||1,mid:timeAt((p+q)/2),a:view.a,b:view.b}; }
});
svg.addEventListener('pointermove',function(e){
  if(!drag||!ptrs[e.pointerId]) return;
  ptrs[e.pointerId].x=e.clientX;
  var ids=Object.keys(ptrs);
  if(drag.pinch && ids.length===2){
    var d=Math.abs(ptrs[ids[0]].x-ptrs[ids[1]].x)||1, f=drag.pinch/d;
    setView(drag.mid-(drag.mid-drag.a)*f, drag.mid+(drag.b-drag.mid)*f); moved=true; return;
  }
  if(drag.pinch) return;
  var dx=e.clientX-drag.x; if(Math.abs(dx)>3){ moved=true; svg.setPointerCapture(e.pointerId); }
  if(moved){ var dt=dx*(drag.b-drag.a)/W; setView(drag.a-dt,drag.b-dt); }
});
function up(e){ delete ptrs[e.pointerId]; if(!Object.keys(ptrs).length) drag=null; }
svg.addEventListener('pointerup',up); svg.addEventListener('pointercancel',up);
// A hidden (thinned) label shows while the pointer is on its mark.
var hov=null;
function hover(l){ if(hov===l) return; if(hov) hov.classList.remove('hov'); hov=l; if(l) l.classList.add('hov'); }
svg.addEventListener('pointerover',function(e){ var g=e.target.closest('g.mark'), m=g?byId[g.id]:null; hover(m&&m.lbl?m.lbl:null); });
svg.addEventListener('pointerleave',function(){ hover(null); });
var detail=document.getElementById('detail');
svg.addEventListener('click',function(e){
  if(moved){ moved=false; return; }
  var lane=e.target.closest('.lname');
  if(lane){ var l=laneOf(lane); l.collapsed=!l.collapsed; layout(); render(); return; }
  var lw=e.target.closest('g.lw');
  var el=lw?document.getElementById(lw.dataset.m):e.target.closest('[id^="m"],g.band,g.counterexample');
  if(el){ var t=el.querySelector(':scope > title'); if(t) detail.textContent=t.textContent; }
});
// Stories.
var stories=[].slice.call(document.querySelectorAll('.story')), cur=null;
function select(si,k){
  var st=stories[si]; if(!st) return; var steps=st.querySelectorAll('.step'); if(k<0||k>=steps.length) return;
  document.querySelectorAll('.hl').forEach(function(e){ e.classList.remove('hl'); });
  document.querySelectorAll('.lhl').forEach(function(e){ e.classList.remove('lhl'); });
  document.querySelectorAll('.step.cur').forEach(function(e){ e.classList.remove('cur'); });
  var li=steps[k]; li.classList.add('cur'); cur={s:si,k:k};
  var lo=Infinity, hi=-Infinity;
  (li.dataset.marks||'').split(' ').forEach(function(id){
    var m=byId[id]; if(!m) return; m.el.classList.add('hl'); if(m.lbl) m.lbl.classList.add('lhl');
    if(m.lane&&m.lane.collapsed){ m.lane.collapsed=false; layout(); }
    var a=m.t!==undefined?m.t:m.t0, b=m.t!==undefined?m.t:m.t1; lo=Math.min(lo,a); hi=Math.max(hi,b);
  });
  if(lo===Infinity) (li.dataset.ts||'').split(' ').forEach(function(t){ if(t){ lo=Math.min(lo,+t); hi=Math.max(hi,+t); } });
  detail.textContent='Step '+(k+1)+': '+li.textContent;
  if(lo!==Infinity){
    var span=view.b-view.a; if(hi-lo>span*0.8) span=(hi-lo)*1.3; if(span<MIN_SPAN) span=MIN_SPAN;
    var c=(lo+hi)/2; setView(c-span/2,c+span/2,true);
  } else render();
}
function step(d){
  if(!stories.length) return;
  if(!cur){ select(0,0); return; }
  var n=stories[cur.s].querySelectorAll('.step').length, k=cur.k+d, s=cur.s;
  if(k>=n){ if(s+1<stories.length){ s++; k=0; } else k=n-1; }
  if(k<0){ if(s>0){ s--; k=stories[s].querySelectorAll('.step').length-1; } else k=0; }
  select(s,k);
}
stories.forEach(function(st,si){
  st.querySelectorAll('.step').forEach(function(li,k){
    li.tabIndex=0; li.setAttribute('role','button');
    li.addEventListener('click',function(){ select(si,k); });
    li.addEventListener('keydown',function(e){ if(e.key==='Enter'||e.key===' '){ e.preventDefault(); select(si,k); } });
  });
  st.querySelector('.prev').addEventListener('click',function(){ if(!cur||cur.s!==si) select(si,0); else step(-1); });
  st.querySelector('.next').addEventListener('click',function(){ if(!cur||cur.s!==si) select(si,0); else step(1); });
});
// Buttons and keys.
function btn(id,f){ var b=document.getElementById(id); if(b) b.addEventListener('click',f); }
btn('zin',function(){ zoom(0.5); }); btn('zout',function(){ zoom(2); });
btn('pl',function(){ pan(-0.25); }); btn('pr',function(){ pan(0.25); });
btn('whole',whole); btn('tocx',toCx);
plot.addEventListener('keydown',function(e){
  var k=e.key, done=true;
  if(k==='+'||k==='=') zoom(0.5); else if(k==='-'||k==='_') zoom(2);
  else if(k==='ArrowLeft') pan(-0.25); else if(k==='ArrowRight') pan(0.25);
  else if(k==='0'||k==='Home') whole(); else if(k==='c') toCx();
  else if(k==='n') step(1); else if(k==='p') step(-1); else done=false;
  if(done) e.preventDefault();
});
function fit(){ var w=Math.max(500,Math.floor(plot.clientWidth-LEFT-34)); if(w!==W){ W=w; layout(); render(); } }
W=Math.max(500,Math.floor(plot.clientWidth-LEFT-34));
layout();
if(CXV){ view.a=CXV[0]; view.b=CXV[1]; }
render();
window.addEventListener('resize',function(){ fit(); });
window.fencesimTimeline={view:view,setView:setView,zoom:zoom,select:select,render:render,marks:marks};
document.body.dataset.ready=String(Math.max(1,Math.round(performance.now())));
})();
