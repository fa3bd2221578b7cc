// Parking lot for ns-3.37 (Debian's libns3-dev): examples/parking_lot.toml's topology, to compare
// ccscope's multi-hop forwarding against (experiments/ns3/parking_lot.py builds and runs it).
//
//   R0 ==hop1==> R1 ==hop2==> R2 ==hop3==> R3      (--hops=1..3 links; default 3; --cross=N: cross flows on
//                                                   the first N links only, default all)
//      <=back1==    <=back2==    <=back3==
//
// Each hop is one point-to-point channel: the forward device 10 Mbit/s with a 100-packet
// DropTailQueue, the reverse device 100 Mbit/s (ACKs only, a queue that never fills), 10 ms each
// way. One long flow R0 -> R<hops> and one cross flow per hop, R<k-1> -> R<k>: bulk TCP
// (BulkSendApplication -> PacketSink), the senders and sinks on the routers themselves, so a data
// packet enters the first link's queue as it leaves its sender, as in ccscope (no access links).
//
// Queueing: a plain DropTail on the forward NetDevice and nothing in front of it. Flow control is
// disabled on the devices (PointToPointHelper::DisableFlowControl), so the device has no
// NetDeviceQueueInterface: Ipv4AddressHelper installs no default queue disc, the traffic-control
// layer hands every packet to the device, and a full device queue drops it (counted by the queue).
// With flow control on and no queue disc, the traffic-control layer would discard packets while the
// device queue is stopped, outside the queue's counters. The packet on the wire is not in the queue,
// as in ccscope's link (queue + serializer). dumbbell.cc instead puts a FifoQueueDisc in front of a
// 1-packet device queue, which holds two packets more than its queue disc's limit.
//
// Sizes: MSS 1448 + 20 TCP + 12 timestamp option + 20 IP = 1500 B IP packets, 1502 B on the wire
// with PPP's 2 B; a pure ACK is 52 B IP, 54 B on the wire (more with SACK blocks). Receivers ACK
// every segment by default (--delAckCount=1, as the script sets ccscope's receiver, delayed_ack = "none"; ns-3's default is 2).
//
// Build as build.sh does: g++ -std=c++17 -O2 -o /tmp/ns3/parking_lot parking_lot.cc -lns3-applications
//   -lns3-traffic-control -lns3-internet -lns3-bridge -lns3-point-to-point -lns3-network -lns3-stats -lns3-core
// Run: /tmp/ns3/parking_lot --hops=3 --tcp=NewReno --simTime=300
//
// Prints one JSON object: the configuration, per flow the payload bytes its sink received and the
// goodput (payload bytes delivered to the application / simTime), data segments sent and resent,
// entries into CA_RECOVERY and CA_LOSS (timeouts); per forward link the bytes and packets sent on
// the wire, utilisation (sent bits / (rate x simTime)) and drops; drops on the reverse links; wall
// seconds of Simulator::Run.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

struct FlowStats
{
    uint64_t dataSegs = 0;  // data segments sent (first transmissions and retransmissions)
    uint64_t retxSegs = 0;  // data segments sent whose sequence number was sent before
    uint32_t highTx = 0;    // highest sequence number sent + 1
    uint32_t recoveries = 0; // entries into CA_RECOVERY
    uint32_t rtos = 0;       // entries into CA_LOSS
};

struct LinkStats
{
    uint64_t txBytes = 0; // on-wire bytes (PPP header included) whose transmission ended
    uint64_t txPkts = 0;
};

static void
OnTx(FlowStats* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    uint32_t seq = h.GetSequenceNumber().GetValue();
    ++f->dataSegs;
    if (seq < f->highTx)
    {
        ++f->retxSegs;
    }
    else
    {
        f->highTx = seq + p->GetSize();
    }
}

static void
OnCongState(FlowStats* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY)
    {
        ++f->recoveries;
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        ++f->rtos;
    }
}

// The socket exists once the application has started.
static void
HookSocket(Ptr<BulkSendApplication> app, FlowStats* f)
{
    Ptr<Socket> s = app->GetSocket();
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
}

static void
OnPhyTxEnd(LinkStats* l, Ptr<const Packet> p)
{
    l->txBytes += p->GetSize();
    ++l->txPkts;
}

int
main(int argc, char* argv[])
{
    uint32_t hops = 3;
    uint32_t cross = 3; // cross flows, on the first `cross` links (default: one per link)
    std::string tcp = "NewReno"; // any ns3::Tcp<Name>: NewReno, Cubic, ...
    double simTime = 300.0;      // simulated seconds
    std::string rate = "10Mbps";
    std::string reverseRate = "100Mbps";
    std::string delay = "10ms";
    uint32_t queuePkts = 100;
    uint32_t reverseQueuePkts = 100000; // ACKs only: never full
    uint32_t mss = 1448;                // 1448 + 32 (TCP+TS) + 20 (IP) = 1500 B IP packet
    uint32_t sockBuf = 1u << 22;        // 4 MiB send/recv buffers: flows are cwnd-limited
    uint32_t initialCwnd = 10;
    uint32_t delAckCount = 1; // ACK every segment, as the script sets ccscope's receiver
    bool sack = true;
    double startJitter = 0.0; // starts uniform in [0, startJitter) s; 0: every flow at 0 s
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("hops", "links in the row (the long flow crosses all, one cross flow per link): 1..3", hops);
    cmd.AddValue("cross", "cross flows, one on each of the first N links (default: every link)", cross);
    cmd.AddValue("tcp", "TCP congestion control: NewReno | Cubic | ...", tcp);
    cmd.AddValue("simTime", "simulated seconds", simTime);
    cmd.AddValue("rate", "forward (data) rate of every link", rate);
    cmd.AddValue("reverseRate", "reverse (ACK) rate of every link", reverseRate);
    cmd.AddValue("delay", "one-way delay of every link, each direction", delay);
    cmd.AddValue("queuePkts", "forward drop-tail queue size in packets", queuePkts);
    cmd.AddValue("mss", "TCP segment size (bytes of payload)", mss);
    cmd.AddValue("sockBuf", "TCP send and receive buffer size (bytes)", sockBuf);
    cmd.AddValue("initialCwnd", "initial congestion window (segments)", initialCwnd);
    cmd.AddValue("delAckCount", "segments per ACK (ns-3's default is 2)", delAckCount);
    cmd.AddValue("sack", "TCP SACK option", sack);
    cmd.AddValue("startJitter", "flows start uniformly in [0, startJitter) s", startJitter);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);

    if (hops < 1 || hops > 3)
    {
        std::fprintf(stderr, "--hops=%u: give 1, 2 or 3\n", hops);
        return 2;
    }
    cross = std::min(cross, hops);
    if (!(simTime > 0) || startJitter < 0 || startJitter >= simTime)
    {
        std::fprintf(stderr, "--simTime must be > 0 and --startJitter in [0, simTime)\n");
        return 2;
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    TypeId tcpTid;
    if (!TypeId::LookupByNameFailSafe("ns3::Tcp" + tcp, &tcpTid))
    {
        std::fprintf(stderr, "unknown --tcp=%s (NewReno|Cubic|LinuxReno|...)\n", tcp.c_str());
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(tcpTid));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));

    // ---- topology --------------------------------------------------------
    NodeContainer routers;
    routers.Create(hops + 1);
    InternetStackHelper stack;
    stack.Install(routers);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePkts)));
    p2p.DisableFlowControl();

    Ipv4AddressHelper addr;
    std::vector<Ptr<PointToPointNetDevice>> fwd;
    std::vector<Ptr<PointToPointNetDevice>> rev;
    std::vector<Ipv4Address> downstream; // address of R<k> on link k
    for (uint32_t k = 1; k <= hops; ++k)
    {
        NetDeviceContainer d = p2p.Install(routers.Get(k - 1), routers.Get(k));
        Ptr<PointToPointNetDevice> f = DynamicCast<PointToPointNetDevice>(d.Get(0));
        Ptr<PointToPointNetDevice> r = DynamicCast<PointToPointNetDevice>(d.Get(1));
        r->SetDataRate(DataRate(reverseRate));
        r->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, reverseQueuePkts));
        fwd.push_back(f);
        rev.push_back(r);
        char base[32];
        std::snprintf(base, sizeof(base), "10.0.%u.0", k);
        addr.SetBase(base, "255.255.255.0");
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        downstream.push_back(ifs.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // No traffic-control queue anywhere: the device queues are the only queues.
    for (uint32_t k = 0; k <= hops; ++k)
    {
        Ptr<Node> n = routers.Get(k);
        Ptr<TrafficControlLayer> tc = n->GetObject<TrafficControlLayer>();
        for (uint32_t i = 0; i < n->GetNDevices(); ++i)
        {
            if (tc && tc->GetRootQueueDiscOnDevice(n->GetDevice(i)))
            {
                std::fprintf(stderr, "node %u device %u has a queue disc; expected none\n", k, i);
                return 1;
            }
        }
    }

    // ---- applications ------------------------------------------------------
    // Flow 0: R0 -> R<hops>; flow k (1..cross): R<k-1> -> R<k>.
    std::vector<std::pair<uint32_t, uint32_t>> ends = {{0, hops}};
    for (uint32_t k = 1; k <= cross; ++k)
    {
        ends.push_back({k - 1, k});
    }
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<FlowStats> stats(ends.size());
    std::vector<double> starts;
    Ptr<UniformRandomVariable> jitter = CreateObject<UniformRandomVariable>();
    for (uint32_t i = 0; i < ends.size(); ++i)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(routers.Get(ends[i].second));
        sa.Start(Seconds(0.0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(downstream[ends[i].second - 1], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer ba = bulk.Install(routers.Get(ends[i].first));
        double st0 = startJitter > 0 ? jitter->GetValue(0.0, startJitter) : 0.0;
        starts.push_back(st0);
        ba.Start(Seconds(st0));
        Simulator::Schedule(Seconds(st0) + NanoSeconds(1), &HookSocket,
                            DynamicCast<BulkSendApplication>(ba.Get(0)), &stats[i]);
    }

    std::vector<LinkStats> links(hops);
    for (uint32_t k = 0; k < hops; ++k)
    {
        fwd[k]->TraceConnectWithoutContext("PhyTxEnd", MakeBoundCallback(&OnPhyTxEnd, &links[k]));
    }

    Simulator::Stop(Seconds(simTime));
    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();

    double linkBps = DataRate(rate).GetBitRate();
    std::printf("{\"config\": {\"hops\": %u, \"cross\": %u, \"tcp\": \"%s\", \"simTime\": %.6g, \"rate\": \"%s\", "
                "\"reverseRate\": \"%s\", \"delay\": \"%s\", \"queuePkts\": %u, \"mss\": %u, \"sockBuf\": %u, "
                "\"initialCwnd\": %u, \"delAckCount\": %u, \"sack\": %s, \"startJitter\": %.6g, \"seed\": %u},\n",
                hops, cross, tcp.c_str(), simTime, rate.c_str(), reverseRate.c_str(), delay.c_str(), queuePkts, mss,
                sockBuf, initialCwnd, delAckCount, sack ? "true" : "false", startJitter, seed);
    std::printf(" \"flows\": [\n");
    for (uint32_t i = 0; i < ends.size(); ++i)
    {
        uint64_t rx = sinks[i]->GetTotalRx();
        const FlowStats& f = stats[i];
        std::printf("  {\"flow\": %u, \"from\": %u, \"to\": %u, \"start_s\": %.6f, \"rx_bytes\": %lu, "
                    "\"goodput_mbps\": %.6f, \"data_segments\": %lu, \"retransmissions\": %lu, "
                    "\"recoveries\": %u, \"rtos\": %u}%s\n",
                    i, ends[i].first, ends[i].second, starts[i], (unsigned long)rx, rx * 8.0 / simTime / 1e6,
                    (unsigned long)f.dataSegs, (unsigned long)f.retxSegs, f.recoveries, f.rtos,
                    i + 1 < ends.size() ? "," : "");
    }
    std::printf(" ],\n \"links\": [\n");
    for (uint32_t k = 0; k < hops; ++k)
    {
        const LinkStats& l = links[k];
        std::printf("  {\"link\": \"hop%u\", \"tx_bytes\": %lu, \"tx_packets\": %lu, \"utilization\": %.6f, "
                    "\"drops\": %u, \"reverse_drops\": %u}%s\n",
                    k + 1, (unsigned long)l.txBytes, (unsigned long)l.txPkts, l.txBytes * 8.0 / (linkBps * simTime),
                    fwd[k]->GetQueue()->GetTotalDroppedPackets(), rev[k]->GetQueue()->GetTotalDroppedPackets(),
                    k + 1 < hops ? "," : "");
    }
    std::printf(" ],\n \"events\": %lu,\n \"wall_run_s\": %.3f\n}\n", (unsigned long)Simulator::GetEventCount(),
                std::chrono::duration<double>(t2 - t1).count());
    Simulator::Destroy();
    return 0;
}
