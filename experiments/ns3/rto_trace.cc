// Per-flow RTO timelines of the ns-3.37 dumbbell (docs/performance.md, "Where the 131 RTOs come from"):
// ../shared/bench/ns3/dumbbell.cc with every socket's CongState, RTO, RTT, CongestionWindow, Tx and Rx
// traced. Prints, per entry into CA_LOSS, the head segment, when it was last sent and how often, and the
// time since the last ACK that advanced SND.UNA ("RTO ..."); then, for the ACK that finally advances
// past that head, the echoed timestamp and whether it predates the timeout ("ADV ... spurious=1").
// Build as build.sh does: g++ -std=c++17 -O2 -o rto_trace rto_trace.cc -lns3-applications
//   -lns3-traffic-control -lns3-internet -lns3-bridge -lns3-point-to-point -lns3-network -lns3-stats -lns3-core
// Run: ./rto_trace --nFlows=16 --tcp=NewReno --queue=DropTail --simTime=300 | grep -E '^(RTO|ADV|REC)'
//
// Dumbbell performance anchor for ns-3.37 (Debian's libns3-dev).
//
//   sender_i --1Gbit/s,0ms--> R1 ==12Mbit/s,20ms==> R2 --1Gbit/s,0ms--> receiver_i
//
// N bulk TCP flows (BulkSendApplication -> PacketSink), one per sender/receiver
// pair.  The bottleneck queue is a traffic-control queue disc on R1's
// bottleneck device (FifoQueueDisc = droptail, or RedQueueDisc), 1000 packets;
// the bottleneck device's own TxQueue is 1 packet so the queue disc really is
// the bottleneck queue.  Access links carry no queue disc (device queue only,
// large enough never to drop).  IP packet size is 1500 B: MSS 1448 + 20 TCP +
// 12 timestamp option + 20 IP.
//
// Prints total bytes delivered, wall-clock seconds (Simulator::Run only, and
// whole program), simulated seconds per wall second, delivered data packets per
// wall second, and ns-3 events executed per wall second.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include <map>

using namespace ns3;

static uint32_t g_loss = 0, g_rec = 0;
struct FlowSt {
  uint32_t id; double rto = 0, srtt = 0; uint32_t cwnd = 0; int state = 0;
  uint32_t una = 0, high = 0; double lastAdv = 0;
  std::map<uint32_t, std::pair<double,int>> tx; // seg -> (last tx time, tx count)
  bool pend = false; uint32_t pendUna = 0; double pendT = 0; uint32_t nrto = 0;
};
static std::vector<FlowSt*> g_fl;
static uint32_t Seg(uint32_t s) { return s == 0 ? 0 : (s - 1) / 1448; }
static void OnRto(FlowSt* f, Time o, Time n) { f->rto = n.GetSeconds(); }
static void OnRtt(FlowSt* f, Time o, Time n) { f->srtt = n.GetSeconds(); }
static void OnCwnd(FlowSt* f, uint32_t o, uint32_t n) { f->cwnd = n; }
static void OnTx(FlowSt* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
  if (p->GetSize() == 0) return;
  uint32_t sg = Seg(h.GetSequenceNumber().GetValue());
  auto& e = f->tx[sg]; e.first = Simulator::Now().GetSeconds(); e.second++;
  if (sg + 1 > f->high) f->high = sg + 1;
}
static void OnRx(FlowSt* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
  if (!(h.GetFlags() & TcpHeader::ACK)) return;
  uint32_t a = Seg(h.GetAckNumber().GetValue());
  if (h.GetAckNumber().GetValue() > 1 && a > f->una) {
    double now = Simulator::Now().GetSeconds();
    if (f->pend) {
      double echo = -1;
      if (h.HasOption(TcpOption::TS)) echo = DynamicCast<const TcpOptionTS>(h.GetOption(TcpOption::TS))->GetEcho() / 1000.0;
      std::printf("ADV flow=%u rto_t=%.3f una=%u adv_t=%.3f echo=%.3f spurious=%d\n", f->id, f->pendT, f->pendUna, now, echo, echo >= 0 && echo < f->pendT);
      f->pend = false;
    }
    f->una = a; f->lastAdv = now;
    f->tx.erase(f->tx.begin(), f->tx.lower_bound(a));
  }
}
static void CongStateChange(FlowSt* f, TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n) {
  double now = Simulator::Now().GetSeconds();
  if (n == TcpSocketState::CA_LOSS) {
    g_loss++; f->nrto++;
    auto it = f->tx.find(f->una);
    double htx = it == f->tx.end() ? -1 : it->second.first; int hc = it == f->tx.end() ? 0 : it->second.second;
    std::printf("RTO flow=%u t=%.3f from=%d rto=%.3f srtt=%.4f cwnd=%u una=%u high=%u out=%u since_adv=%.3f head_tx=%.3f head_txcount=%d\n",
      f->id, now, (int)o, f->rto, f->srtt, f->cwnd/1448, f->una, f->high, f->high - f->una, now - f->lastAdv, htx, hc);
    f->pend = true; f->pendUna = f->una; f->pendT = now;
  }
  if (n == TcpSocketState::CA_RECOVERY) { g_rec++; std::printf("REC flow=%u t=%.3f una=%u srtt=%.4f rto=%.3f\n", f->id, now, f->una, f->srtt, f->rto); }
}
static void TraceSock(Ptr<BulkSendApplication> app, uint32_t id) {
  Ptr<Socket> s = app->GetSocket();
  FlowSt* f = new FlowSt(); f->id = id; g_fl.push_back(f);
  s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongStateChange, f));
  s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, f));
  s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnRtt, f));
  s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, f));
  s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
  s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, f));
}

static uint64_t g_bottleneckTxPkts = 0;

static void
BottleneckPhyTxEnd(Ptr<const Packet>)
{
    ++g_bottleneckTxPkts;
}

int
main(int argc, char* argv[])
{
    auto t0 = std::chrono::steady_clock::now();

    uint32_t nFlows = 1;
    std::string tcp = "Cubic";  // any ns3::Tcp<Name>: Cubic, NewReno, Bbr, Vegas, Ledbat, ...
    std::string queue = "DropTail"; // DropTail | RED
    double simTime = 300.0;     // simulated seconds
    std::string bottleneckRate = "12Mbps";
    std::string bottleneckDelay = "20ms";
    std::string accessRate = "1Gbps";
    std::string accessDelay = "0ms";
    uint32_t queuePkts = 1000;
    uint32_t mss = 1448;          // 1448 + 32 (TCP+TS) + 20 (IP) = 1500 B IP packet
    uint32_t sockBuf = 1u << 22;  // 4 MiB send/recv buffers: flows are cwnd-limited
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("nFlows", "number of bulk TCP flows", nFlows);
    cmd.AddValue("tcp", "TCP congestion control: Cubic | NewReno | Bbr | Vegas | Ledbat | ...", tcp);
    cmd.AddValue("queue", "bottleneck queue: DropTail | RED", queue);
    cmd.AddValue("simTime", "simulated seconds", simTime);
    cmd.AddValue("bottleneckRate", "bottleneck rate", bottleneckRate);
    cmd.AddValue("bottleneckDelay", "bottleneck one-way delay", bottleneckDelay);
    cmd.AddValue("queuePkts", "bottleneck queue size in packets", queuePkts);
    cmd.AddValue("mss", "TCP segment size (bytes of payload)", mss);
    cmd.AddValue("sockBuf", "TCP send and receive buffer size (bytes)", sockBuf);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // Any ns-3 congestion control by its class name without the "Tcp" prefix:
    // Cubic, NewReno, LinuxReno, Bbr, Vegas, Ledbat, Bic, Htcp, Westwood, ...
    TypeId tcpTid;
    if (!TypeId::LookupByNameFailSafe("ns3::Tcp" + tcp, &tcpTid))
    {
        std::fprintf(stderr, "unknown --tcp=%s (Cubic|NewReno|LinuxReno|Bbr|Vegas|Ledbat|...)\n", tcp.c_str());
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(tcpTid));
    if (tcp == "Bbr")
    {
        // BBR needs paced sending (as Linux's fq or internal pacing gives it).
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }
    if (queue != "DropTail" && queue != "RED")
    {
        std::fprintf(stderr, "unknown --queue=%s (DropTail|RED)\n", queue.c_str());
        return 2;
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));

    // ---- topology --------------------------------------------------------
    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(nFlows);
    NodeContainer receivers;
    receivers.Create(nFlows);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("100000p"));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(bottleneckRate));
    bottleneck.SetChannelAttribute("Delay", StringValue(bottleneckDelay));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    NetDeviceContainer bnDevs = bottleneck.Install(routers.Get(0), routers.Get(1));

    // Bottleneck queue disc (installed before addresses are assigned, so that
    // Ipv4AddressHelper does not install its default FqCoDel there).
    TrafficControlHelper tch;
    if (queue == "DropTail")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePkts)));
    }
    else
    {
        // RED with ns-3 defaults (gentle, adaptive off), thresholds scaled
        // to the queue: minTh = 5% and maxTh = 15% of the limit.
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePkts)),
                             "MeanPktSize",
                             UintegerValue(1500),
                             "MinTh",
                             DoubleValue(queuePkts * 0.05),
                             "MaxTh",
                             DoubleValue(queuePkts * 0.15),
                             "LinkBandwidth",
                             StringValue(bottleneckRate),
                             "LinkDelay",
                             StringValue(bottleneckDelay));
    }
    QueueDiscContainer qdiscs = tch.Install(bnDevs);

    Ipv4AddressHelper addr;
    addr.SetBase("10.255.0.0", "255.255.255.252");
    addr.Assign(bnDevs);

    std::vector<Ipv4Address> rxAddrs;
    TrafficControlHelper noQdisc; // used only to uninstall the default qdisc
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        NetDeviceContainer l = access.Install(senders.Get(i), routers.Get(0));
        NetDeviceContainer r = access.Install(routers.Get(1), receivers.Get(i));
        char base[32];
        std::snprintf(base, sizeof(base), "10.%u.%u.0", 1 + (i / 256), i % 256);
        addr.SetBase(base, "255.255.255.0", "0.0.0.1");
        addr.Assign(l);
        std::snprintf(base, sizeof(base), "10.%u.%u.0", 101 + (i / 256), i % 256);
        addr.SetBase(base, "255.255.255.0", "0.0.0.1");
        Ipv4InterfaceContainer ri = addr.Assign(r);
        rxAddrs.push_back(ri.GetAddress(1));
        noQdisc.Uninstall(l);
        noQdisc.Uninstall(r);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // ---- applications ------------------------------------------------------
    const uint16_t port = 5000;
    std::vector<Ptr<PacketSink>> sinks;
    Ptr<UniformRandomVariable> startJitter = CreateObject<UniformRandomVariable>();
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receivers.Get(i));
        sa.Start(Seconds(0.0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(rxAddrs[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer ba = bulk.Install(senders.Get(i));
        double st0 = startJitter->GetValue(0.0, 1.0);
        ba.Start(Seconds(st0));
        Simulator::Schedule(Seconds(st0 + 0.001), &TraceSock, DynamicCast<BulkSendApplication>(ba.Get(0)), i);
    }

    bnDevs.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&BottleneckPhyTxEnd));

    Simulator::Stop(Seconds(simTime));

    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();

    uint64_t totalBytes = 0;
    for (auto& s : sinks)
    {
        totalBytes += s->GetTotalRx();
    }
    uint64_t events = Simulator::GetEventCount();
    QueueDisc::Stats st = qdiscs.Get(0)->GetStats();
    Simulator::Destroy();
    auto t3 = std::chrono::steady_clock::now();

    double runWall = std::chrono::duration<double>(t2 - t1).count();
    double totalWall = std::chrono::duration<double>(t3 - t0).count();
    double dataPkts = double(totalBytes) / mss;

    std::printf("config: nFlows=%u tcp=%s queue=%s simTime=%.1f bottleneck=%s/%s qlimit=%up mss=%u\n",
                nFlows, tcp.c_str(), queue.c_str(), simTime, bottleneckRate.c_str(),
                bottleneckDelay.c_str(), queuePkts, mss);
    std::printf("total_bytes_delivered=%lu\n", (unsigned long)totalBytes);
    std::printf("goodput_mbps=%.3f\n", totalBytes * 8.0 / simTime / 1e6);
    std::printf("delivered_data_pkts=%.0f\n", dataPkts);
    std::printf("bottleneck_tx_pkts=%lu\n", (unsigned long)g_bottleneckTxPkts);
    std::printf("qdisc_drops=%u\n", st.nTotalDroppedPackets);
    std::printf("events=%lu\n", (unsigned long)events);
    std::printf("ca_loss_entries=%u ca_recovery_entries=%u\n", g_loss, g_rec);
    std::printf("wall_run_s=%.3f\n", runWall);
    std::printf("wall_total_s=%.3f\n", totalWall);
    std::printf("sim_s_per_wall_s=%.2f\n", simTime / runWall);
    std::printf("delivered_pkts_per_wall_s=%.0f\n", dataPkts / runWall);
    std::printf("events_per_wall_s=%.0f\n", events / runWall);
    std::printf("ns_per_event=%.1f\n", runWall * 1e9 / events);
    return 0;
}
